package repofs_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palacehq/palace/repofs"
)

// tree is a repository root with a sibling "outside" directory that links
// inside the root point to.
type tree struct{ root, outside string }

func newTree(t *testing.T) tree {
	t.Helper()
	base := t.TempDir()
	tr := tree{root: filepath.Join(base, "repo"), outside: filepath.Join(base, "outside")}
	for _, d := range []string{tr.root, tr.outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(tr.outside, "target"), []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return tr
}

func (tr tree) link(t *testing.T, target, rel string) {
	t.Helper()
	p := filepath.Join(tr.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

// unchanged fails if anything was written outside the root.
func (tr tree) unchanged(t *testing.T) {
	t.Helper()
	if b, _ := os.ReadFile(filepath.Join(tr.outside, "target")); string(b) != "keep\n" {
		t.Errorf("outside target changed: %q", b)
	}
	ents, _ := os.ReadDir(tr.outside)
	if len(ents) != 1 {
		t.Errorf("outside holds %d entries, want only target", len(ents))
	}
}

func TestOpenFileRefusesLinks(t *testing.T) {
	const rel = ".palace/inbox.jsonl"
	for _, c := range []struct {
		name string
		make func(t *testing.T, tr tree)
		link string // the path the *LinkError must name, relative to root
	}{
		{"file is a link to a file outside", func(t *testing.T, tr tree) {
			tr.link(t, filepath.Join(tr.outside, "target"), rel)
		}, rel},
		{"file is a relative link", func(t *testing.T, tr tree) {
			tr.link(t, "../../outside/target", rel)
		}, rel},
		{"file is a dangling link", func(t *testing.T, tr tree) {
			tr.link(t, filepath.Join(tr.outside, "new"), rel)
		}, rel},
		{"file is a link inside the repository", func(t *testing.T, tr tree) {
			if err := os.WriteFile(filepath.Join(tr.root, "real"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			tr.link(t, "../real", rel)
		}, rel},
		{"directory is a link outside", func(t *testing.T, tr tree) {
			tr.link(t, tr.outside, ".palace")
		}, ".palace"},
		{"directory is a dangling link", func(t *testing.T, tr tree) {
			tr.link(t, filepath.Join(tr.outside, "nodir"), ".palace")
		}, ".palace"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr := newTree(t)
			c.make(t, tr)
			f, err := repofs.OpenFile(tr.root, rel, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
			if err == nil {
				f.Write([]byte("letter\n"))
				f.Close()
				t.Fatal("opened through a link")
			}
			var le *repofs.LinkError
			if !errors.As(err, &le) || !errors.Is(err, repofs.ErrLink) {
				t.Fatalf("error %T %v, want *LinkError", err, err)
			}
			if want := filepath.Join(tr.root, c.link); le.Path != want {
				t.Errorf("names %s, want %s", le.Path, want)
			}
			if le.Target == "" || !strings.Contains(err.Error(), "rm "+le.Path) {
				t.Errorf("message lacks the target or the fix: %v", err)
			}
			tr.unchanged(t)
			// Reading is refused the same way.
			if _, err := repofs.OpenFile(tr.root, rel, os.O_RDONLY, 0); !errors.Is(err, repofs.ErrLink) {
				t.Errorf("read: %v, want ErrLink", err)
			}
			if err := repofs.WriteFileAtomic(tr.root, rel, []byte("x"), 0o644); !errors.Is(err, repofs.ErrLink) {
				t.Errorf("WriteFileAtomic: %v, want ErrLink", err)
			}
			tr.unchanged(t)
		})
	}
}

func TestOpenFileCreatesAndAppends(t *testing.T) {
	tr := newTree(t)
	// The root itself may be reached through a link: it is the caller's.
	linkedRoot := filepath.Join(filepath.Dir(tr.root), "via-link")
	if err := os.Symlink(tr.root, linkedRoot); err != nil {
		t.Fatal(err)
	}
	for i, root := range []string{tr.root, linkedRoot} {
		f, err := repofs.OpenFile(root, filepath.Join(".palace", "sub", "inbox.jsonl"), os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte{'a' + byte(i), '\n'}); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	b, err := os.ReadFile(filepath.Join(tr.root, ".palace", "sub", "inbox.jsonl"))
	if err != nil || string(b) != "a\nb\n" {
		t.Fatalf("box = %q, %v", b, err)
	}
	// Without O_CREATE a missing file or directory is fs.ErrNotExist.
	for _, rel := range []string{"nope/inbox.jsonl", ".palace/nope"} {
		if _, err := repofs.OpenFile(tr.root, rel, os.O_RDONLY, 0); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: %v, want ErrNotExist", rel, err)
		}
	}
	if _, err := os.Stat(filepath.Join(tr.root, "nope")); !errors.Is(err, fs.ErrNotExist) {
		t.Error("a read created a directory")
	}
}

func TestOpenFileRejectsEscapes(t *testing.T) {
	tr := newTree(t)
	for _, rel := range []string{"", ".", "..", "../outside/target", "/etc/passwd", "a/../../outside/target"} {
		if f, err := repofs.OpenFile(tr.root, rel, os.O_WRONLY|os.O_APPEND, 0); err == nil {
			f.Close()
			t.Errorf("%q: opened", rel)
		}
	}
	tr.unchanged(t)
}

func TestWriteFileAtomic(t *testing.T) {
	tr := newTree(t)
	rel := filepath.Join(".palace", "policies", "gate.rego")
	p := filepath.Join(tr.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := repofs.WriteFileAtomic(tr.root, rel, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if b, _ := os.ReadFile(p); err != nil || string(b) != "new" || st.Mode().Perm() != 0o600 {
		t.Errorf("after write: %q, mode %v, %v; want new, 0600", b, st.Mode(), err)
	}
	ents, _ := os.ReadDir(filepath.Dir(p))
	if len(ents) != 1 {
		t.Errorf("temporary files left: %v", ents)
	}
	// A missing directory is not created: fmt only rewrites what exists.
	if err := repofs.WriteFileAtomic(tr.root, "none/x.rego", []byte("x"), 0o644); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing dir: %v", err)
	}
}

// TestRemove deletes a regular file and refuses a link, a linked directory
// on the way and a directory, leaving what they point at alone.
func TestRemove(t *testing.T) {
	tr := newTree(t)
	if err := os.MkdirAll(filepath.Join(tr.root, ".cursor", "rules"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(tr.root, ".cursor", "rules", "palace-go.mdc")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := repofs.Remove(tr.root, filepath.Join(".cursor", "rules", "palace-go.mdc")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(file); !os.IsNotExist(err) {
		t.Fatalf("file still there: %v", err)
	}
	tr.link(t, filepath.Join(tr.outside, "target"), filepath.Join(".cursor", "rules", "palace-link.mdc"))
	if err := repofs.Remove(tr.root, filepath.Join(".cursor", "rules", "palace-link.mdc")); !errors.Is(err, repofs.ErrLink) {
		t.Errorf("link: %v, want ErrLink", err)
	}
	tr.link(t, tr.outside, ".github")
	if err := repofs.Remove(tr.root, filepath.Join(".github", "target")); !errors.Is(err, repofs.ErrLink) {
		t.Errorf("linked directory: %v, want ErrLink", err)
	}
	if err := repofs.Remove(tr.root, ".cursor"); !errors.Is(err, repofs.ErrNotRegular) {
		t.Errorf("directory: %v, want ErrNotRegular", err)
	}
	if b, err := os.ReadFile(filepath.Join(tr.outside, "target")); err != nil || string(b) != "keep\n" {
		t.Errorf("outside target: %q, %v", b, err)
	}
}

// TestMkdirAll creates missing folders and refuses a link on the way,
// creating nothing through it.
func TestMkdirAll(t *testing.T) {
	tr := newTree(t)
	if err := repofs.MkdirAll(tr.root, filepath.Join(".palace", "policies")); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(filepath.Join(tr.root, ".palace", "policies")); err != nil || !st.IsDir() {
		t.Fatalf("not created: %v", err)
	}
	// Again: nothing to do.
	if err := repofs.MkdirAll(tr.root, filepath.Join(".palace", "policies")); err != nil {
		t.Fatal(err)
	}
	tr.link(t, tr.outside, ".cursor")
	err := repofs.MkdirAll(tr.root, filepath.Join(".cursor", "rules"))
	var le *repofs.LinkError
	if !errors.As(err, &le) || le.Path != filepath.Join(tr.root, ".cursor") {
		t.Fatalf("linked folder: %v, want a *LinkError naming .cursor", err)
	}
	tr.unchanged(t)
}

// TestCheckoutRoot finds the nearest folder holding .git, lexically, and
// never takes a link for one.
func TestCheckoutRoot(t *testing.T) {
	tr := newTree(t)
	if err := os.Mkdir(filepath.Join(tr.root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Another checkout outside, which a link in the repository points at.
	other := filepath.Join(tr.outside, "other")
	if err := os.MkdirAll(filepath.Join(other, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	tr.link(t, other, ".palace")
	// A checkout the user reaches through a link of their own.
	mine := filepath.Join(tr.outside, "mine")
	if err := os.MkdirAll(filepath.Join(mine, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	viaLink := filepath.Join(filepath.Dir(tr.root), "mine-link")
	if err := os.Symlink(mine, viaLink); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ dir, want string }{
		{tr.root, tr.root},
		{filepath.Join(tr.root, "a", "missing"), tr.root},
		{filepath.Join(tr.root, ".palace"), tr.root},
		{filepath.Join(tr.root, ".palace", "policies"), tr.root},
		{other, other},
		{viaLink, viaLink},
		{filepath.Join(viaLink, ".palace", "policies"), viaLink},
		{tr.outside, ""},
	} {
		got, ok := repofs.CheckoutRoot(c.dir)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("CheckoutRoot(%s) = %q, %v; want %q", c.dir, got, ok, c.want)
		}
	}
}
