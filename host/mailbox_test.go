package host_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/intake"
	"github.com/palacehq/palace/host/mail"
	"github.com/palacehq/palace/mailbox"
)

// mailEnv is a palace home and one git checkout (no commits made by the
// helpers beyond the first).
type mailEnv struct {
	t    *testing.T
	home string
	repo string
}

func newMailEnv(t *testing.T) *mailEnv {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := &mailEnv{t: t, home: filepath.Join(root, "home"), repo: filepath.Join(root, "repo")}
	if err := os.MkdirAll(e.repo, 0o755); err != nil {
		t.Fatal(err)
	}
	e.git("init", "-q", "-b", "main")
	e.git("commit", "-q", "--allow-empty", "-m", "init")
	return e
}

func (e *mailEnv) git(args ...string) {
	e.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	cmd.Dir = e.repo
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		e.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func (e *mailEnv) write(rel, content string) string {
	e.t.Helper()
	p := filepath.Join(e.repo, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

func (e *mailEnv) mail(opts host.Options) *mail.Mail {
	e.t.Helper()
	opts.Home, opts.Cwd = e.home, cmpOr(opts.Cwd, e.repo)
	m, err := host.OpenMail(context.Background(), opts)
	if err != nil {
		e.t.Fatal(err)
	}
	return m
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func mailLetter(what, extra string) string {
	if extra != "" {
		extra = "," + extra
	}
	return fmt.Sprintf(`{"ts":"2025-06-01T12:00:00Z","agent":"claude","class":"tool_error","what":%q%s}`, what, extra)
}

// OpenMail creates nothing: a hook run on a machine without a palace leaves
// no home behind.
func TestOpenMailCreatesNothing(t *testing.T) {
	e := newMailEnv(t)
	e.write(".palace/inbox.jsonl", mailLetter("x", `"tool":"t"`)+"\n")
	m := e.mail(host.Options{})
	if _, err := m.Check(context.Background(), mail.CheckRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(e.home); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("home was created: %v", err)
	}
}

// A letter addressed to a remote the palace holds memory of is delivered
// into that repository's checkout by a distribute run from anywhere, once
// the directory is still a checkout of that remote; doctor counts the
// letters waiting before the run, and those no known checkout takes.
func TestMailDistributeFindsCheckoutsThePalaceKnows(t *testing.T) {
	e := newMailEnv(t)
	ctx := context.Background()
	e.git("remote", "add", "origin", "git@github.com:acme/widgets.git")
	moved := filepath.Join(filepath.Dir(e.repo), "moved")
	for _, dir := range []string{e.repo, moved} {
		if dir == moved {
			if err := os.MkdirAll(moved, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"init", "-q"}, {"remote", "add", "origin", "https://github.com/acme/gadgets.git"}} {
				cmd := exec.Command("git", args...)
				cmd.Dir = moved
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("git %v: %v\n%s", args, err, out)
				}
			}
		}
		// Memory of the repository records its anchor, with its path.
		h, err := host.Open(ctx, host.Options{Home: e.home, Cwd: dir, Actor: "t"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.Intake().Record(ctx, intake.RecordRequest{Content: "seen in " + dir, Anchor: "repo"}); err != nil {
			t.Fatal(err)
		}
		h.Close()
	}
	// The second checkout now points elsewhere: its directory no longer
	// holds github.com/acme/gadgets.
	cmd := exec.Command("git", "remote", "set-url", "origin", "https://github.com/acme/other.git")
	cmd.Dir = moved
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	elsewhere := t.TempDir()
	m := e.mail(host.Options{Actor: "claude", Cwd: elsewhere})
	for _, repo := range []string{"github.com/ACME/Widgets", "https://github.com/acme/gadgets", "github.com/nobody/here"} {
		if _, err := m.File(ctx, mailbox.Letter{Class: "c", What: "about " + repo, Repo: repo}); err != nil {
			t.Fatal(err)
		}
	}
	mailCheck := func() host.Check {
		for _, c := range host.Doctor(ctx, host.Options{Home: e.home, Cwd: elsewhere}).Checks {
			if c.Name == "mailbox" {
				return c
			}
		}
		t.Fatal("doctor has no mailbox check")
		return host.Check{}
	}
	c := mailCheck()
	if c.Status != "warn" || !strings.Contains(c.Detail, "1 letter for boxes palace can reach") ||
		!strings.Contains(c.Detail, "2 letters for repositories with no known checkout here") || !strings.Contains(c.Fix, "palace mailbox distribute") {
		t.Errorf("doctor before distributing: %+v", c)
	}
	d, err := m.Distribute(ctx)
	if err != nil {
		t.Fatal(err)
	}
	box := filepath.Join(e.repo, ".palace", "inbox.jsonl")
	if d.Delivered != 1 || len(d.Pending) != 2 || len(d.Boxes) != 1 || d.Boxes[0].Path != box {
		t.Fatalf("distribution %+v", d)
	}
	if b, err := os.ReadFile(box); err != nil || !strings.Contains(string(b), "about github.com/ACME/Widgets") {
		t.Errorf("box %s: %q %v", box, b, err)
	}
	if _, err := os.Stat(filepath.Join(moved, ".palace")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a letter was written into a directory that is no longer a checkout of its remote: %v", err)
	}
	c = mailCheck()
	if c.Status != "warn" || strings.Contains(c.Detail, "boxes palace can reach") || !strings.Contains(c.Detail, "github.com/nobody/here") {
		t.Errorf("doctor after distributing: %+v", c)
	}
}
