package mailbox_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/palacehq/palace/mailbox"
)

type world struct {
	mb        *mailbox.Mailbox
	userHome  string
	repoA     string // has a worktree at wt
	wt        string
	repoB     string // origin github.com/org/b, never delivered to before
	plainDir  string
	lines     map[string]string // name → spool line
	committed string            // a line already in A's box from git
}

func file(t *testing.T, mb *mailbox.Mailbox, name, repo string) string {
	t.Helper()
	f, err := mb.File(context.Background(), mailbox.Letter{TS: "2025-06-01T12:00:00Z", Agent: "a", Class: "c", What: name, Repo: repo})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(mb.SpoolPath())
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	last := lines[len(lines)-1]
	if mailbox.ID([]byte(last)) != f.ID {
		t.Fatalf("spool tail is not the filed letter")
	}
	return last
}

func newWorld(t *testing.T) *world {
	t.Helper()
	root := t.TempDir()
	w := &world{userHome: filepath.Join(root, "user"), lines: map[string]string{}}
	w.mb = &mailbox.Mailbox{Home: filepath.Join(root, "palace-home"), UserHome: w.userHome, Now: fixedNow}
	w.repoA = newRepo(t, filepath.Join(w.userHome, "src", "a"))
	w.wt = filepath.Join(w.userHome, "src", "a-wt")
	git(t, w.repoA, "worktree", "add", "-q", w.wt)
	if err := os.MkdirAll(filepath.Join(w.repoA, "sub", "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	w.repoB = newRepo(t, filepath.Join(root, "elsewhere", "b"))
	git(t, w.repoB, "remote", "add", "origin", "https://github.com/org/b.git")
	w.plainDir = filepath.Join(root, "plain")
	if err := os.MkdirAll(w.plainDir, 0o755); err != nil {
		t.Fatal(err)
	}

	// A's box already holds a committed letter nobody filed here.
	w.committed = letter("from a teammate, via git", "")
	writeFile(t, mailbox.BoxPath(w.repoA), w.committed+"\n")
	git(t, w.repoA, "add", ".palace/inbox.jsonl")
	git(t, w.repoA, "commit", "-q", "-m", "box")

	for _, l := range []struct{ name, repo string }{
		{"tilde", "~/src/a"},
		{"worktree annotated", "~/src/a-wt (worktree feature-x)"},
		{"subdir", filepath.Join(w.repoA, "sub", "dir")},
		{"global", ""},
		{"absent", filepath.Join(root, "no", "such", "repo")},
		{"not a repo", w.plainDir},
		{"remote", "github.com/org/b"},
		{"relative", "src/a"},
	} {
		w.lines[l.name] = file(t, w.mb, l.name, l.repo)
	}
	// Filed twice, byte for byte.
	file(t, w.mb, "tilde", "~/src/a")
	return w
}

func TestDistribute(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	rep, err := w.mb.Distribute(ctx)
	if err != nil {
		t.Fatal(err)
	}
	boxA, global := mailbox.BoxPath(w.repoA), w.mb.GlobalBoxPath()

	wantA := w.committed + "\n" + w.lines["tilde"] + "\n" + w.lines["worktree annotated"] + "\n" + w.lines["subdir"] + "\n"
	if got := readFile(t, boxA); got != wantA {
		t.Errorf("box A:\n%s\nwant:\n%s", got, wantA)
	}
	if got := readFile(t, global); got != w.lines["global"]+"\n" {
		t.Errorf("global box = %q, want only the projectless letter", got)
	}
	if rep.Delivered != 4 || rep.AlreadyPresent != 0 {
		t.Errorf("delivered %d, already %d; want 4, 0", rep.Delivered, rep.AlreadyPresent)
	}
	wantBoxes := []mailbox.BoxDelivery{
		{Path: global, Global: true, Delivered: 1},
		{Path: boxA, RepoRoot: w.repoA, Delivered: 3},
	}
	sort.Slice(wantBoxes, func(i, j int) bool { return wantBoxes[i].Path < wantBoxes[j].Path })
	if !reflect.DeepEqual(rep.Boxes, wantBoxes) {
		t.Errorf("boxes = %+v\nwant %+v", rep.Boxes, wantBoxes)
	}
	reasons := map[string]string{}
	for _, p := range rep.Pending {
		reasons[p.Repo] = p.Reason
	}
	wantReasons := map[string]string{
		filepath.Join(filepath.Dir(w.userHome), "no", "such", "repo"): "not on this machine: " + filepath.Join(filepath.Dir(w.userHome), "no", "such", "repo") + " does not exist",
		w.plainDir:         w.plainDir + ": not inside a git checkout (a bare repository has no worktree to hold a box)",
		"github.com/org/b": "no checkout of github.com/org/b is known on this machine (distribute from inside one, or register its box)",
		"src/a":            `"src/a" is a relative path; name the repository by absolute path or by remote (github.com/org/name)`,
	}
	if !reflect.DeepEqual(reasons, wantReasons) {
		t.Errorf("pending = %+v\nwant %+v", reasons, wantReasons)
	}

	// Idempotent: a second run appends nothing.
	beforeA, beforeG := readFile(t, boxA), readFile(t, global)
	rep2, err := w.mb.Distribute(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if readFile(t, boxA) != beforeA || readFile(t, global) != beforeG || rep2.Delivered != 0 || rep2.AlreadyPresent != 4 || len(rep2.Pending) != 4 {
		t.Errorf("second run: delivered %d, already %d, pending %d", rep2.Delivered, rep2.AlreadyPresent, len(rep2.Pending))
	}

	// Once a checkout of the remote is registered, its letter is delivered.
	if _, err := w.mb.Register(ctx, w.repoB); err != nil {
		t.Fatal(err)
	}
	rep3, err := w.mb.Distribute(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, mailbox.BoxPath(w.repoB)); got != w.lines["remote"]+"\n" || rep3.Delivered != 1 {
		t.Errorf("box B = %q (delivered %d)", got, rep3.Delivered)
	}
	regs, err := w.mb.Boxes()
	if err != nil {
		t.Fatal(err)
	}
	if len(regs) != 2 || regs[0].RepoIdentity == "" {
		t.Errorf("registry = %+v", regs)
	}
	// What distribute wrote passes the hook.
	for _, p := range []string{boxA, global, mailbox.BoxPath(w.repoB)} {
		if f := mailbox.Check(ctx, p, []byte(readFile(t, p)), mailbox.CheckOptions{Global: p == global}); len(f) != 0 {
			t.Errorf("Check %s: %v", p, strs(f))
		}
	}
}

func TestDistributeKeepsBoxWithoutFinalNewline(t *testing.T) {
	root := t.TempDir()
	repo := newRepo(t, filepath.Join(root, "r"))
	mb := &mailbox.Mailbox{Home: filepath.Join(root, "home"), Now: fixedNow}
	handEdited := letter("typed by hand, no newline", "")
	writeFile(t, mailbox.BoxPath(repo), handEdited)
	line := file(t, mb, "new", repo)
	if _, err := mb.Distribute(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := readFile(t, mailbox.BoxPath(repo)), handEdited+"\n"+line+"\n"; got != want {
		t.Errorf("box = %q, want %q", got, want)
	}
}

func TestDistributeSkipsIncompleteAndInvalidSpoolLines(t *testing.T) {
	root := t.TempDir()
	mb := &mailbox.Mailbox{Home: filepath.Join(root, "home"), Now: fixedNow}
	ok := file(t, mb, "ok", "")
	f, err := os.OpenFile(mb.SpoolPath(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Appended by hand: a broken line, a secret, a line being written.
	f.WriteString("{oops\n" + letter("leak", `"snippet":"AKIAIOSFODNN7EXAMPLE"`) + "\n" + `{"ts":"2025-06-01T12:00:00Z","agent":"a","cla`)
	f.Close()
	rep, err := mb.Distribute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, mb.GlobalBoxPath()); got != ok+"\n" {
		t.Errorf("global box = %q", got)
	}
	want := []mailbox.LineProblem{
		{Path: mb.SpoolPath(), Line: 2, Code: "PM001", Message: "invalid JSON: invalid character 'o' looking for beginning of object key string"},
		{Path: mb.SpoolPath(), Line: 3, Code: "PM003", Message: "secret (aws-access-key-id): AKIA************MPLE; not delivered"},
	}
	if !reflect.DeepEqual(rep.Invalid, want) {
		t.Errorf("invalid = %+v\nwant %+v", rep.Invalid, want)
	}
}

func TestNormalizeRepoViaRegister(t *testing.T) {
	root := t.TempDir()
	mb := &mailbox.Mailbox{Home: filepath.Join(root, "home")}
	if _, err := mb.Register(context.Background(), root); err == nil || !strings.Contains(err.Error(), "not inside a git checkout") {
		t.Errorf("Register outside git: %v", err)
	}
	bare := filepath.Join(root, "bare.git")
	git(t, root, "init", "-q", "--bare", bare)
	if _, err := mb.Register(context.Background(), bare); err == nil || !strings.Contains(err.Error(), "not inside a git checkout") {
		t.Errorf("Register bare: %v", err)
	}
}

// Concurrent distribute runs (a cron job and a person) deliver each letter
// once: the lock in Home serialises them.
func TestDistributeConcurrentRuns(t *testing.T) {
	root := t.TempDir()
	repo := newRepo(t, filepath.Join(root, "r"))
	mb := &mailbox.Mailbox{Home: filepath.Join(root, "home"), Now: fixedNow}
	var want strings.Builder
	for i := range 50 {
		want.WriteString(file(t, mb, fmt.Sprint("letter ", i), repo) + "\n")
	}
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			m := &mailbox.Mailbox{Home: mb.Home}
			if _, err := m.Distribute(context.Background()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got := readFile(t, mailbox.BoxPath(repo)); got != want.String() {
		t.Errorf("box has %d lines, want 50 each once", strings.Count(got, "\n"))
	}
}
