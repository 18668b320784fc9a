package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/palacehq/palace/mailbox"
)

// hookRepo is a throwaway git repository whose commits run the mailbox hook.
type hookRepo struct {
	t   *testing.T
	dir string
	env []string
}

func newHookRepo(t *testing.T) *hookRepo {
	t.Helper()
	root := t.TempDir()
	r := &hookRepo{t: t, dir: filepath.Join(root, "repo")}
	r.env = append(filteredEnv(),
		"PALACE_HOME="+filepath.Join(root, "palace-home"),
		"PRE_COMMIT_HOME="+filepath.Join(root, "pre-commit-home"),
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e",
		"NO_COLOR=1")
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r.must("git", "init", "-q", "-b", "main")
	return r
}

// run runs a command in the repository and returns its combined output and
// exit code.
func (r *hookRepo) run(name string, args ...string) (string, int) {
	r.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = r.dir
	cmd.Env = r.env
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	} else if err != nil {
		r.t.Fatalf("%s %v: %v", name, args, err)
	}
	return string(out), 0
}

func (r *hookRepo) must(name string, args ...string) string {
	r.t.Helper()
	out, code := r.run(name, args...)
	if code != 0 {
		r.t.Fatalf("%s %v: exit %d\n%s", name, args, code, out)
	}
	return out
}

func (r *hookRepo) write(rel, content string) {
	r.t.Helper()
	p := filepath.Join(r.dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *hookRepo) read(rel string) string {
	r.t.Helper()
	b, err := os.ReadFile(filepath.Join(r.dir, rel))
	if err != nil {
		r.t.Fatal(err)
	}
	return string(b)
}

// commitCase is one attempt to commit a change to a box.
type commitCase struct {
	name string
	// edit turns the committed box into the one to commit.
	edit func(box string) string
	// want is empty for an accepted commit, else lines the rejection prints.
	want []string
}

// secretKey is a well-formed AWS key id that must never be echoed.
const secretKey = "AKIAIOSFODNN7EXAMPLF"

var hookCases = []commitCase{
	{"secret", func(b string) string { return b + letterLine("the key is "+secretKey, "") + "\n" },
		[]string{".palace/inbox.jsonl:2:87: PM003 secret (aws-access-key-id): AKIA************MPLF"}},
	{"conflict marker", func(b string) string {
		return b + "<<<<<<< HEAD\n" + letterLine("ours", "") + "\n=======\n" + letterLine("theirs", "") + "\n>>>>>>> topic\n"
	}, []string{".palace/inbox.jsonl:2:1: PM004 merge conflict marker", ".palace/inbox.jsonl:4:1: PM004", ".palace/inbox.jsonl:6:1: PM004"}},
	{"broken JSON line", func(b string) string { return b + `{"ts":"2025-06-01T12:00:00Z","agent":` + "\n" },
		[]string{".palace/inbox.jsonl:2:38: PM001 invalid JSON: unexpected end of JSON input"}},
	{"rewritten old line", func(b string) string { return strings.Replace(b, "first report", "first report, edited", 1) },
		[]string{".palace/inbox.jsonl:1:1: PM006 line 1 rewrites committed history: letter "}},
	{"deleted old line", func(string) string { return letterLine("a new start", "") + "\n" },
		[]string{".palace/inbox.jsonl:1:1: PM006 line 1 rewrites committed history"}},
	{"clean append", func(b string) string { return b + letterLine("second report", `"answers":["`+firstID()+`"]`) + "\n" }, nil},
}

func firstLetter() string { return letterLine("first report", `"tool":"bash"`) }

func firstID() string { return mailbox.ID([]byte(firstLetter())) }

// tryCommits commits the first box, then tries each case from that commit:
// a rejected commit must print its findings and change nothing; an
// accepted one must land.
func (r *hookRepo) tryCommits(cases []commitCase) {
	r.t.Helper()
	r.write(".palace/inbox.jsonl", firstLetter()+"\n")
	r.must("git", "add", "-A")
	r.must("git", "commit", "-q", "-m", "first letter")
	base := r.read(".palace/inbox.jsonl")
	for _, c := range cases {
		r.t.Run(c.name, func(t *testing.T) {
			head := strings.TrimSpace(r.must("git", "rev-parse", "HEAD"))
			r.write(".palace/inbox.jsonl", c.edit(base))
			r.must("git", "add", ".palace/inbox.jsonl")
			out, code := r.run("git", "commit", "-m", c.name)
			after := strings.TrimSpace(r.must("git", "rev-parse", "HEAD"))
			if c.want == nil {
				if code != 0 || after == head {
					t.Fatalf("clean commit rejected (exit %d):\n%s", code, out)
				}
				return
			}
			if code == 0 || after != head {
				t.Fatalf("commit accepted, want rejection:\n%s", out)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("hook output lacks %q:\n%s", w, out)
				}
			}
			if strings.Contains(out, secretKey) {
				t.Errorf("the hook printed the secret unredacted:\n%s", out)
			}
			r.must("git", "reset", "-q", "--hard", "HEAD")
		})
	}
}

// manifestField reads a field of the palace-mailbox hook from the
// repository's own .pre-commit-hooks.yaml, so the local hook under test
// matches what a pre-commit user gets.
func manifestField(t *testing.T, field string) string {
	t.Helper()
	b, err := os.ReadFile("../../.pre-commit-hooks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s+` + field + `:\s*(.+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf(".pre-commit-hooks.yaml has no %s", field)
	}
	return strings.TrimSpace(string(m[1]))
}

// TestPreCommitHook runs the real pre-commit tool: a local hook entry with
// the built binary, installed as the repository's git hook, judging real
// commits.
func TestPreCommitHook(t *testing.T) {
	if _, err := exec.LookPath("pre-commit"); err != nil {
		t.Skip("pre-commit is not on PATH; install it (Debian: apt-get install pre-commit) to run the hook end-to-end test")
	}
	entry := manifestField(t, "entry")
	if !strings.HasPrefix(entry, "palace ") {
		t.Fatalf("manifest entry %q does not run palace", entry)
	}
	r := newHookRepo(t)
	r.write(".pre-commit-config.yaml", `repos:
  - repo: local
    hooks:
      - id: palace-mailbox
        name: palace mailbox check
        entry: `+palaceBin+strings.TrimPrefix(entry, "palace")+`
        language: system
        files: `+manifestField(t, "files")+`
        types: `+manifestField(t, "types")+`
`)
	r.must("pre-commit", "install")
	r.tryCommits(hookCases)
	if n := strings.Count(r.read(".palace/inbox.jsonl"), "\n"); n != 2 {
		t.Errorf("box has %d lines after the clean append, want 2", n)
	}
}

// TestPlainGitHook is the README's hook without the pre-commit framework:
// .git/hooks/pre-commit running `palace mailbox check --staged`.
func TestPlainGitHook(t *testing.T) {
	r := newHookRepo(t)
	r.write(".git/hooks/pre-commit", "#!/bin/sh\nexec "+palaceBin+" mailbox check --staged\n")
	if err := os.Chmod(filepath.Join(r.dir, ".git/hooks/pre-commit"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.tryCommits(hookCases)
	// A commit without a box change passes without checking anything.
	r.write("README", "hello\n")
	r.must("git", "add", "README")
	if out, code := r.run("git", "commit", "-q", "-m", "readme"); code != 0 || out != "" {
		t.Errorf("commit without a box: exit %d\n%s", code, out)
	}
}

// TestPreCommitTryRepo installs the hook the way a pre-commit user does:
// `pre-commit try-repo` on this repository, which builds palace with `go
// install ./...` (language: golang). It runs offline from the local module
// cache (GOPROXY=off).
func TestPreCommitTryRepo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds palace from a clone of this repository; skipped with -short")
	}
	if _, err := exec.LookPath("pre-commit"); err != nil {
		t.Skip("pre-commit is not on PATH; install it (Debian: apt-get install pre-commit) to run the hook end-to-end test")
	}
	src, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if top, err := exec.Command("git", "-C", src, "rev-parse", "--show-toplevel").Output(); err != nil || strings.TrimSpace(string(top)) != src {
		t.Skipf("%s is not a git checkout (%v); pre-commit try-repo needs one", src, err)
	}
	modcache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	r := newHookRepo(t)
	// pre-commit's golang language sets GOPATH to its environment; the
	// module cache is pointed back at ours so nothing is downloaded.
	r.env = append(r.env, "GOMODCACHE="+strings.TrimSpace(string(modcache)), "GOPROXY=off", "GOFLAGS=-mod=mod")
	r.write(".palace/inbox.jsonl", firstLetter()+"\n"+firstLetter()+"\n")
	r.must("git", "add", "-A")
	out, code := r.run("pre-commit", "try-repo", src, "palace-mailbox", "--files", ".palace/inbox.jsonl")
	if code != 1 || !strings.Contains(out, ".palace/inbox.jsonl:2:1: PM005 duplicate of line 1") {
		t.Fatalf("try-repo on a box with a duplicate: exit %d\n%s", code, out)
	}
	r.write(".palace/inbox.jsonl", firstLetter()+"\n")
	r.must("git", "add", "-A")
	if out, code := r.run("pre-commit", "try-repo", src, "palace-mailbox", "--files", ".palace/inbox.jsonl"); code != 0 {
		t.Fatalf("try-repo on a clean box: exit %d\n%s", code, out)
	}
}
