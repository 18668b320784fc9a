package staleness_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/staleness"
)

func TestParseRef(t *testing.T) {
	for _, tc := range []struct {
		ref  string
		want string // Ref.String(), "" for no citation of code
		kind domain.ObservationKind
	}{
		{"store/db.go#L3-L5", "store/db.go#L3-L5", domain.ObservedLines},
		{"store/db.go#L3-5", "store/db.go#L3-L5", domain.ObservedLines},
		{"store/db.go#L7", "store/db.go#L7", domain.ObservedLines},
		{"store/db.go:10-24", "store/db.go#L10-L24", domain.ObservedLines},
		{"store/db.go:10", "store/db.go#L10", domain.ObservedLines},
		{"./store/../store/db.go#Open", "store/db.go#Open", domain.ObservedSymbol},
		{"store/db.go#Store.Open", "store/db.go#Store.Open", domain.ObservedSymbol},
		{"store/db.go", "store/db.go", domain.ObservedFile},
		{"/abs/path/x.go#L1", "/abs/path/x.go#L1", domain.ObservedLines},
		{"", "", ""},
		{"https://example.com/a#L3", "", ""},
		{"ci://nfs", "", ""},
		{"mailto:someone", "", ""},
		{"../outside.go#L1", "", ""},
		{"store/db.go#L5-L3", "", ""},
		{"store/db.go#L0", "", ""},
		{"store/db.go#not a symbol", "", ""},
		{"notes about it", "", ""},
		{"store/", "", ""},
	} {
		r, ok := staleness.ParseRef(tc.ref)
		got := ""
		if ok {
			got = r.String()
		}
		if got != tc.want || (ok && r.Kind != tc.kind) {
			t.Errorf("ParseRef(%q) = %q (%s), %v; want %q (%s)", tc.ref, got, r.Kind, ok, tc.want, tc.kind)
		}
	}
}

// repo is a real git checkout.
type repo struct {
	t    *testing.T
	root string
}

func newRepo(t *testing.T) *repo {
	t.Helper()
	root := t.TempDir()
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	r := &repo{t: t, root: root}
	r.git("init", "-q", "-b", "main")
	return r
}

func (r *repo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", r.root}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e")
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func (r *repo) write(rel, text string) {
	r.t.Helper()
	p := filepath.Join(r.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *repo) commit(msg string) {
	r.t.Helper()
	r.git("add", "-A")
	r.git("commit", "-q", "-m", msg)
}

const dbGo = `package store

func Open() error {
	return nil
}

func Close() {}
`

// observe records what ref sees now, failing the test when it sees nothing.
func (r *repo) observe(ev, ref string) domain.Observation {
	r.t.Helper()
	o, ok := staleness.Observe(r.root, staleness.Head(context.Background(), r.root), ev, ref, "2026-01-01T00:00:00.000Z")
	if !ok {
		r.t.Fatalf("Observe(%q) saw nothing", ref)
	}
	return o
}

func look(c *staleness.Checker, o domain.Observation) staleness.Result {
	return c.Pass(context.Background()).Look(o)
}

func TestLookFollowsCodeAndNamesChanges(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ref    string
		change func(r *repo)
		state  staleness.State
		path   string
		lines  [2]int
		detail string
	}{
		{"unchanged", "store/db.go#L3-L5", func(r *repo) {}, staleness.Fresh, "store/db.go", [2]int{3, 5}, ""},
		{"re-indented and CRLF", "store/db.go#L3-L5", func(r *repo) {
			r.write("store/db.go", strings.ReplaceAll(strings.ReplaceAll(dbGo, "\treturn nil", "    return nil"), "\n", "\r\n"))
		}, staleness.Fresh, "store/db.go", [2]int{3, 5}, ""},
		{"lines changed", "store/db.go#L3-L5", func(r *repo) {
			r.write("store/db.go", strings.Replace(dbGo, "return nil", "return errClosed", 1))
			r.commit("change")
		}, staleness.Changed, "store/db.go", [2]int{3, 5}, "lines 3–5 changed"},
		{"moved down within the file", "store/db.go#L3-L5", func(r *repo) {
			r.write("store/db.go", strings.Replace(dbGo, "package store\n", "package store\n\n// Package store opens things.\n\nvar x = 1\n", 1))
			r.commit("move")
		}, staleness.Moved, "store/db.go", [2]int{7, 9}, ""},
		{"file cut short", "store/db.go#L5-L7", func(r *repo) {
			r.write("store/db.go", "package store\n")
		}, staleness.Changed, "store/db.go", [2]int{5, 7}, "lines 5–7 are gone (the file has 1 lines)"},
		{"deleted", "store/db.go#L3-L5", func(r *repo) {
			r.git("rm", "-q", "store/db.go")
			r.commit("delete")
		}, staleness.Changed, "store/db.go", [2]int{3, 5}, "the file was deleted"},
		{"renamed by git", "store/db.go#L3-L5", func(r *repo) {
			r.git("mv", "store/db.go", "store/database.go")
			r.commit("rename")
		}, staleness.Moved, "store/database.go", [2]int{3, 5}, ""},
		{"renamed and changed", "store/db.go#L3-L5", func(r *repo) {
			r.git("mv", "store/db.go", "store/database.go")
			r.write("store/database.go", strings.Replace(dbGo, "return nil", "return errClosed", 1))
			r.commit("rename")
		}, staleness.Changed, "store/database.go", [2]int{3, 5}, "lines 3–5 changed"},
		{"symbol kept", "store/db.go#Close", func(r *repo) {
			r.write("store/db.go", strings.Replace(dbGo, "func Close() {}", "func Close() { println() }", 1))
		}, staleness.Fresh, "store/db.go", [2]int{}, ""},
		{"symbol gone", "store/db.go#Close", func(r *repo) {
			r.write("store/db.go", strings.Replace(dbGo, "func Close() {}", "", 1))
		}, staleness.Changed, "store/db.go", [2]int{}, "no longer defines Close"},
		{"whole file kept", "store/db.go", func(r *repo) {
			r.write("store/db.go", "package store\n")
		}, staleness.Fresh, "store/db.go", [2]int{}, ""},
		{"whole file, its directory replaced by a link", "store/db.go", func(r *repo) {
			outside := t.TempDir()
			if err := os.WriteFile(filepath.Join(outside, "db.go"), []byte(dbGo), 0o644); err != nil {
				t.Fatal(err)
			}
			os.RemoveAll(filepath.Join(r.root, "store"))
			if err := os.Symlink(outside, filepath.Join(r.root, "store")); err != nil {
				t.Fatal(err)
			}
		}, staleness.Changed, "store/db.go", [2]int{}, "is no longer a regular file (palace does not follow links)"},
		{"replaced by a link out of the repository", "store/db.go#L3-L5", func(r *repo) {
			outside := filepath.Join(t.TempDir(), "db.go")
			if err := os.WriteFile(outside, []byte(dbGo), 0o644); err != nil {
				t.Fatal(err)
			}
			os.Remove(filepath.Join(r.root, "store/db.go"))
			if err := os.Symlink(outside, filepath.Join(r.root, "store/db.go")); err != nil {
				t.Fatal(err)
			}
		}, staleness.Changed, "store/db.go", [2]int{3, 5}, "is no longer a regular file (palace does not follow links)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRepo(t)
			r.write("store/db.go", dbGo)
			r.commit("init")
			o := r.observe("ev_1", tc.ref)
			tc.change(r)
			got := look(staleness.NewChecker(r.root), o)
			if got.State != tc.state || got.Path != tc.path || got.Start != tc.lines[0] || got.End != tc.lines[1] || got.Detail != tc.detail {
				t.Errorf("Look = %+v\nwant state %d at %s %v, detail %q", got, tc.state, tc.path, tc.lines, tc.detail)
			}
		})
	}
}

// A cited FIFO is refused without blocking, and a file over the limit is
// not read: neither can be observed, and a look at one is never Fresh.
func TestHostileCitedFiles(t *testing.T) {
	r := newRepo(t)
	r.write("store/db.go", dbGo)
	r.commit("init")
	o := r.observe("ev_1", "store/db.go#L3-L5")
	fifo := filepath.Join(r.root, "store", "pipe.go")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan bool)
	go func() {
		_, ok := staleness.Observe(r.root, "", "ev_2", "store/pipe.go#L1", "2026-01-01T00:00:00.000Z")
		done <- ok
	}()
	select {
	case ok := <-done:
		if ok {
			t.Error("a FIFO was observed")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("observing a FIFO blocked")
	}
	r.write("big.go", strings.Repeat("x\n", staleness.MaxFileBytes/2+1))
	if _, ok := staleness.Observe(r.root, "", "ev_3", "big.go#L1", "2026-01-01T00:00:00.000Z"); ok {
		t.Error("a file over the limit was observed")
	}
	if _, ok := staleness.Observe(r.root, "", "ev_4", "/etc/hostname", "2026-01-01T00:00:00.000Z"); ok {
		t.Error("a file outside the repository was observed")
	}
	// A link inside the repository to a file outside it, and a directory
	// linked out of it: neither is followed.
	secret := filepath.Join(t.TempDir(), "secret.go")
	if err := os.WriteFile(secret, []byte("package secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(r.root, "store", "link.go")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(secret), filepath.Join(r.root, "out")); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"store/link.go#L1", "out/secret.go#L1", "out/secret.go"} {
		if _, ok := staleness.Observe(r.root, "", "ev_5", ref, "2026-01-01T00:00:00.000Z"); ok {
			t.Errorf("%s was observed through a symbolic link", ref)
		}
	}
	// The cited file becomes a FIFO: the look is not fresh and returns.
	os.Remove(filepath.Join(r.root, "store/db.go"))
	if err := syscall.Mkfifo(filepath.Join(r.root, "store/db.go"), 0o644); err != nil {
		t.Fatal(err)
	}
	go func() { done <- look(staleness.NewChecker(r.root), o).State == staleness.Changed }()
	select {
	case changed := <-done:
		if !changed {
			t.Error("a FIFO in the cited file's place looked fresh")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a look at a FIFO blocked")
	}
}

// A file is read once per change, however many passes and observations
// look at it.
func TestOneReadPerFileChange(t *testing.T) {
	r := newRepo(t)
	r.write("store/db.go", dbGo)
	r.commit("init")
	obs := []domain.Observation{r.observe("ev_1", "store/db.go#L3-L5"), r.observe("ev_2", "store/db.go#L7"), r.observe("ev_3", "store/db.go#Close")}
	c := staleness.NewChecker(r.root)
	for range 5 {
		p := c.Pass(context.Background())
		for _, o := range obs {
			if s := p.Look(o).State; s != staleness.Fresh {
				t.Fatalf("look at %+v: state %d", o, s)
			}
		}
	}
	if n := c.Reads(); n != 1 {
		t.Errorf("%d reads of one unchanged file, want 1", n)
	}
	r.write("store/db.go", strings.Replace(dbGo, "return nil", "return errClosed", 1))
	for range 3 {
		c.Pass(context.Background()).Look(obs[0])
	}
	if n := c.Reads(); n != 2 {
		t.Errorf("%d reads after one change, want 2", n)
	}
}
