package mailbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/palacehq/palace/repofs"
	"github.com/palacehq/palace/secrets"
)

// Mailbox is the spool, the global box and the box registry under one
// palace home. The zero value of each optional field means its default.
type Mailbox struct {
	// Home is $PALACE_HOME. Required.
	Home string
	// UserHome expands a leading "~" in a letter's repo. Defaults to
	// os.UserHomeDir().
	UserHome string
	// Now stamps letters filed without a ts. Defaults to time.Now.
	Now func() time.Time
	// Checkouts are checkouts the palace knows beside the registry (the
	// repositories it holds memory of, with their paths). A letter naming
	// one's remote is delivered there by Distribute once the directory is
	// checked to be a checkout of that remote still; it is then
	// registered. Optional.
	Checkouts []RegisteredBox
}

// File names under Home.
const (
	SpoolFile    = "field-reports.jsonl"
	GlobalBox    = "inbox.jsonl"
	RegistryFile = "boxes.json"
	lockFileName = "mailbox.lock"
)

// SpoolPath is $PALACE_HOME/field-reports.jsonl.
func (m *Mailbox) SpoolPath() string { return filepath.Join(m.Home, SpoolFile) }

// GlobalBoxPath is $PALACE_HOME/inbox.jsonl.
func (m *Mailbox) GlobalBoxPath() string { return filepath.Join(m.Home, GlobalBox) }

// RegistryPath is $PALACE_HOME/boxes.json.
func (m *Mailbox) RegistryPath() string { return filepath.Join(m.Home, RegistryFile) }

// BoxPath is the box of a repository: <repoRoot>/.palace/inbox.jsonl.
func BoxPath(repoRoot string) string { return filepath.Join(repoRoot, ".palace", "inbox.jsonl") }

// IsGlobalBox reports whether path is the global box of this home, so the
// CLI can set CheckOptions.Global.
func (m *Mailbox) IsGlobalBox(path string) bool {
	a, err1 := filepath.Abs(path)
	b, err2 := filepath.Abs(m.GlobalBoxPath())
	return err1 == nil && err2 == nil && a == b
}

func (m *Mailbox) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// ErrSecret is matched (errors.Is) by a *SecretError.
var ErrSecret = errors.New("letter contains a secret")

// SecretError refuses a letter that trips the secret scanner. It carries the
// findings (redacted) and, for each, the field it was found in.
type SecretError struct {
	Findings []secrets.Finding
	Fields   []string
}

func (e *SecretError) Error() string {
	var parts []string
	for i, f := range e.Findings {
		where := ""
		if i < len(e.Fields) && e.Fields[i] != "" {
			where = fmt.Sprintf(" in %q", e.Fields[i])
		}
		parts = append(parts, fmt.Sprintf("%s (%s)%s: %s", f.Rule, f.Description, where, f.Redacted))
	}
	return "letter refused, it contains a secret: " + strings.Join(parts, "; ") +
		"; remove it, or mark a deliberate fixture with " + secrets.AllowPragma
}

// Is makes errors.Is(err, ErrSecret) true.
func (e *SecretError) Is(target error) bool { return target == ErrSecret }

// Filed is what File wrote.
type Filed struct {
	ID     string `json:"id"`
	Spool  string `json:"spool"`
	Letter Letter `json:"letter"`
	// Repaired is the number of the spool line that had no final newline
	// (a crash, a hand edit): it was ended, kept as it is, and this letter
	// went on the next line. 0 when the spool was fine.
	Repaired int `json:"repaired,omitempty"`
}

// File appends a letter to the spool. A letter without a ts is stamped now
// (UTC, milliseconds). In order: the letter is validated (*LetterError,
// PM002), rendered as one line (at most MaxLineBytes, PM010), scanned for
// secrets (*SecretError), and only then written — with a single write(2) on
// an O_APPEND descriptor, under a lock on the spool, so concurrent writers,
// threads or processes, never interleave or lose a line. A refused letter
// writes nothing. The spool and Home are created (0600, 0700) if missing.
//
// A spool whose last line has no '\n' is repaired by the same write: the
// letter is preceded by a '\n', so the broken line stays as it was (check
// and distribute report it) and the letter starts on a line of its own.
//
// # Notes
//
// O_APPEND writes are atomic with respect to each other on local
// filesystems; on NFS they are not, so keep $PALACE_HOME local. A writer
// that appends without palace (echo >> spool) does not take the lock; its
// line is only at risk if it is still being written at the moment palace
// finds it unterminated.
func (m *Mailbox) File(ctx context.Context, l Letter) (Filed, error) {
	if err := ctx.Err(); err != nil {
		return Filed{}, err
	}
	if l.TS == "" {
		l.TS = m.now().UTC().Format("2006-01-02T15:04:05.000Z07:00")
	}
	if err := l.Validate(); err != nil {
		return Filed{}, err
	}
	line, err := marshalLine(l)
	if err != nil {
		return Filed{}, err
	}
	if len(line)-1 > MaxLineBytes {
		return Filed{}, &LetterError{Code: CodeLongLine,
			Msg: fmt.Sprintf("letter is %d bytes as a line, over the %d-byte limit; shorten what or snippet", len(line)-1, MaxLineBytes)}
	}
	if found := secrets.Scan(line[:len(line)-1]); len(found) > 0 {
		return Filed{}, &SecretError{Findings: found, Fields: fieldsAt(line, found)}
	}
	if err := os.MkdirAll(m.Home, 0o700); err != nil {
		return Filed{}, fmt.Errorf("file letter: %w", err)
	}
	// The home is the user's, but the spool is written by every agent that
	// files a letter: a link planted in its place (field-reports.jsonl ->
	// ~/.bashrc) must not make palace append there.
	f, err := repofs.OpenFile(m.Home, SpoolFile, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if errors.Is(err, repofs.ErrLink) || errors.Is(err, repofs.ErrNotRegular) {
		return Filed{}, err // names the path already
	}
	if err != nil {
		return Filed{}, fmt.Errorf("file letter: %w", err)
	}
	defer f.Close()
	repaired, err := appendLines(f, line)
	if err != nil {
		return Filed{}, fmt.Errorf("file letter: %w", err)
	}
	return Filed{ID: ID(line), Spool: m.SpoolPath(), Letter: l, Repaired: repaired}, nil
}

// fieldsAt names the field each finding lies in.
func fieldsAt(line []byte, found []secrets.Finding) []string {
	out := make([]string, len(found))
	forEachMember(line, 0, func(key []byte, _ int, val []byte, valOff int) {
		name, _ := decodeString(key)
		for i, f := range found {
			if f.Offset >= valOff && f.Offset < valOff+len(val) {
				out[i] = name
			}
		}
	})
	return out
}

// appendLines appends b ('\n'-terminated lines) to f, an O_APPEND file
// open for reading too, with one write under the file's lock. If the file's
// last line has no '\n', the write starts with one, so that line is kept as
// it is and b's first line is not glued to it; the number of that line is
// returned (0 if nothing needed repair).
//
// A short write (disk full) is an error; b's last line is then torn, which
// readers see as an invalid last line, never as a merged one, and the next
// append repairs.
func appendLines(f *os.File, b []byte) (repaired int, err error) {
	unlock, err := flock(f)
	if err != nil {
		return 0, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	defer unlock()
	return appendLocked(f, b)
}

// appendLocked is appendLines for a caller that holds f's lock.
func appendLocked(f *os.File, b []byte) (repaired int, err error) {
	ends, lines, err := endsWithNewline(f)
	if err != nil {
		return 0, err
	}
	if !ends {
		repaired = lines
		b = append([]byte{'\n'}, b...)
	}
	n, err := f.Write(b)
	if err == nil && n != len(b) {
		err = fmt.Errorf("short write to %s: %d of %d bytes", f.Name(), n, len(b))
	}
	return repaired, err
}

// endsWithNewline reports whether f is empty or ends with '\n'; when it
// does not, lines is the number of its last line (counting is a read of
// the file, done only then).
func endsWithNewline(f *os.File) (ends bool, lines int, err error) {
	st, err := f.Stat()
	if err != nil {
		return false, 0, fmt.Errorf("stat %s: %w", f.Name(), err)
	}
	if st.Size() == 0 {
		return true, 0, nil
	}
	var last [1]byte
	if _, err := f.ReadAt(last[:], st.Size()-1); err != nil {
		return false, 0, fmt.Errorf("read %s: %w", f.Name(), err)
	}
	if last[0] == '\n' {
		return true, 0, nil
	}
	lines = 1
	buf := make([]byte, 64<<10)
	for off := int64(0); off < st.Size(); {
		k, err := f.ReadAt(buf, off)
		lines += bytes.Count(buf[:k], nl)
		off += int64(k)
		if err == io.EOF {
			break
		}
		if err != nil {
			return false, 0, fmt.Errorf("read %s: %w", f.Name(), err)
		}
	}
	return false, lines, nil
}
