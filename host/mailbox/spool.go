package mailbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/palacehq/palace/host/secrets"
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
}

// File appends a letter to the spool. A letter without a ts is stamped now
// (UTC, milliseconds). In order: the letter is validated (*LetterError,
// PM002), rendered as one line (at most MaxLineBytes, PM010), scanned for
// secrets (*SecretError), and only then written — with a single write(2) on
// an O_APPEND descriptor, so concurrent writers, threads or processes, never
// interleave or lose a line. A refused letter writes nothing. The spool and
// Home are created (0600, 0700) if missing.
//
// # Notes
//
// O_APPEND writes are atomic with respect to each other on local
// filesystems; on NFS they are not, so keep $PALACE_HOME local.
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
	if err := appendOnce(m.SpoolPath(), line, 0o600); err != nil {
		return Filed{}, fmt.Errorf("file letter: %w", err)
	}
	return Filed{ID: ID(line), Spool: m.SpoolPath(), Letter: l}, nil
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

// appendOnce appends b to path with one write on an O_APPEND descriptor.
// A short write (disk full) is an error; the caller's line is then torn,
// which readers see as an invalid last line, never as a merged one, because
// every complete line ends with '\n'.
func appendOnce(path string, b []byte, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, perm)
	if err != nil {
		return err
	}
	n, err := f.Write(b)
	if err == nil && n != len(b) {
		err = fmt.Errorf("short write to %s: %d of %d bytes", path, n, len(b))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
