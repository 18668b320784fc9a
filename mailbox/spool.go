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
	Home     string           // $PALACE_HOME; required
	UserHome string           // expands "~" in a letter's repo; default os.UserHomeDir()
	Now      func() time.Time // stamps letters filed without a ts; default time.Now
	// Checkouts are checkouts known beside the registry. Distribute delivers
	// a letter naming one's remote there once the directory is checked to
	// still be one, and registers it.
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

// IsGlobalBox reports whether path is the global box of this home.
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

// SecretError refuses a letter that trips the secret scanner: the redacted
// findings and the field of each.
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
	// Repaired is the spool line that had no final newline and was ended
	// as it was before this letter; 0 when the spool was fine.
	Repaired int `json:"repaired,omitempty"`
}

// File appends a letter to the spool, stamping a missing ts now (UTC,
// milliseconds). The letter is validated (*LetterError), bounded to
// MaxLineBytes (PM010) and scanned for secrets (*SecretError) before one
// O_APPEND write under a lock on the spool, so concurrent writers never
// interleave; a refused letter writes nothing. Home and the spool are
// created (0700, 0600) if missing. A last line without '\n' is ended first
// and kept as it was.
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
	// Every agent writes the spool: a link planted in its place
	// (-> ~/.bashrc) must not make palace append there.
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

// appendLines appends b ('\n'-terminated lines) to f, an O_APPEND file also
// open for reading, in one write under the file's lock. An unterminated
// last line is ended first; its number is returned (0 if none). A short
// write is an error and leaves a torn last line, which the next append ends.
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

// endsWithNewline reports whether f is empty or ends with '\n'; if not,
// lines is the number of its last line.
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
