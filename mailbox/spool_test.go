package mailbox_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/palacehq/palace/mailbox"
)

func TestFile(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	mb := &mailbox.Mailbox{Home: home, Now: fixedNow}
	filed, err := mb.File(context.Background(), mailbox.Letter{Agent: "claude", Class: "tool_error", What: "x <y> & z", Repo: "~/src/p"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"ts":"2025-06-01T12:00:00.000Z","agent":"claude","class":"tool_error","what":"x <y> & z","repo":"~/src/p"}` + "\n"
	if got := readFile(t, mb.SpoolPath()); got != want {
		t.Fatalf("spool = %q, want %q", got, want)
	}
	if filed.ID != mailbox.ID([]byte(want)) || filed.Spool != mb.SpoolPath() || filed.Letter.TS != "2025-06-01T12:00:00.000Z" {
		t.Errorf("Filed = %+v", filed)
	}
	if st, _ := os.Stat(mb.SpoolPath()); st.Mode().Perm() != 0o600 {
		t.Errorf("spool mode %v, want 0600", st.Mode().Perm())
	}
	// What File writes, Check accepts.
	if got := mailbox.Check(context.Background(), "spool", []byte(want), mailbox.CheckOptions{}); len(got) != 0 {
		t.Errorf("Check of a filed letter: %v", strs(got))
	}
}

func TestFileRefusesWithoutWriting(t *testing.T) {
	home := t.TempDir()
	mb := &mailbox.Mailbox{Home: home, Now: fixedNow}
	tests := []struct {
		name    string
		l       mailbox.Letter
		wantErr string
		is      error
	}{
		{"missing field", mailbox.Letter{Agent: "a", Class: "c"}, `letter: missing required field "what"`, nil},
		{"bad ts", mailbox.Letter{TS: "now", Agent: "a", Class: "c", What: "w"}, `letter: "ts" is not RFC3339: "now" (want e.g. 2025-06-01T12:00:00Z)`, nil},
		{"secret", mailbox.Letter{Agent: "a", Class: "c", What: "w", Snippet: "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE"},
			`letter refused, it contains a secret: aws-access-key-id (AWS access key ID) in "snippet": AKIA************MPLE; remove it, or mark a deliberate fixture with palace:allow-secret`, mailbox.ErrSecret},
		{"too long", mailbox.Letter{Agent: "a", Class: "c", What: strings.Repeat("w", mailbox.MaxLineBytes)},
			fmt.Sprintf("letter: letter is %d bytes as a line, over the 65536-byte limit; shorten what or snippet", mailbox.MaxLineBytes+67), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := mb.File(context.Background(), tt.l)
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("err = %v\nwant %s", err, tt.wantErr)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("errors.Is(%v) = false", tt.is)
			}
			if _, err := os.Stat(mb.SpoolPath()); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("spool written for a refused letter (%v)", err)
			}
		})
	}
	// The pragma lets a deliberate fixture through.
	if _, err := mb.File(context.Background(), mailbox.Letter{Agent: "a", Class: "c", What: "fixture palace:allow-secret", Snippet: "AKIAIOSFODNN7EXAMPLE"}); err != nil {
		t.Errorf("pragma: %v", err)
	}
}

// startFilers starts procs copies of the test binary, each filing each
// letters into home's spool (the PALACE_TEST_FILER branch of TestMain).
func startFilers(t *testing.T, home string, procs, each int) []*exec.Cmd {
	t.Helper()
	var cmds []*exec.Cmd
	for p := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "PALACE_TEST_FILER=proc"+fmt.Sprint(p), "PALACE_TEST_HOME="+home, fmt.Sprintf("PALACE_TEST_COUNT=%d", each))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	return cmds
}

// Many goroutines and many processes append at once; every letter must
// arrive whole, exactly once.
func TestFileConcurrentAppends(t *testing.T) {
	home := t.TempDir()
	const goroutines, procs, each = 8, 4, 60
	mb := &mailbox.Mailbox{Home: home}

	cmds := startFilers(t, home, procs, each)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				if _, err := mb.File(context.Background(), bulkyLetter(fmt.Sprint("goroutine", g), i)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("filer process: %v", err)
		}
	}

	content := readFile(t, mb.SpoolPath())
	lines := strings.Split(strings.TrimSuffix(content, "\n"), "\n")
	if len(lines) != (goroutines+procs)*each {
		t.Fatalf("%d lines, want %d", len(lines), (goroutines+procs)*each)
	}
	seen := map[string]bool{}
	for i, line := range lines {
		l, err := mailbox.ParseLine([]byte(line))
		if err != nil {
			t.Fatalf("line %d torn: %v", i+1, err)
		}
		if want := bulkyLetter(l.Agent, atoi(strings.Fields(l.What)[1])); l.Snippet != want.Snippet {
			t.Fatalf("line %d: snippet mixed with another letter", i+1)
		}
		seen[l.What] = true
	}
	if len(seen) != len(lines) {
		t.Errorf("%d distinct letters in %d lines", len(seen), len(lines))
	}
}
