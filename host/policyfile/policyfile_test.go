package policyfile_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/palacehq/palace/host/policyfile"
)

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func repo(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "init", "-q", "-b", "main")
	return dir
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, at string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(at), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, at); err != nil {
		t.Fatal(err)
	}
}

// TestStateHoldsALinkToItsFile: a committed link is tracked only when the
// file it resolves to is tracked and unmodified in the same repository.
func TestStateHoldsALinkToItsFile(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := repo(t, filepath.Join(base, "repo"))
	other := repo(t, filepath.Join(base, "other"))
	write(t, filepath.Join(other, "policies", "gate.rego"), "package palace.gate\n")
	git(t, other, "add", ".")
	git(t, other, "commit", "-q", "-m", "other")
	write(t, filepath.Join(base, "loose.rego"), "package palace.gate\n")

	write(t, filepath.Join(r, "team", "gate.rego"), "package palace.gate\n")
	write(t, filepath.Join(r, "team", "scope.rego"), "package palace.scope\n")
	write(t, filepath.Join(r, ".palace", "policies", "plain.rego"), "package palace.lanes\n")
	write(t, filepath.Join(r, "local", "gate.rego"), "package palace.gate\n")
	links := map[string]string{
		"to-tracked.rego":   "../../team/gate.rego",
		"to-modified.rego":  "../../team/scope.rego",
		"to-untracked.rego": "../../local/gate.rego",
		"to-outside.rego":   filepath.Join(base, "loose.rego"),
		"to-other.rego":     filepath.Join(other, "policies", "gate.rego"),
	}
	for name, target := range links {
		symlink(t, target, filepath.Join(r, ".palace", "policies", name))
	}
	symlink(t, "team", filepath.Join(r, "linked"))
	symlink(t, other, filepath.Join(r, "other-link"))
	git(t, r, "add", ".palace", "team", "linked", "other-link")
	git(t, r, "commit", "-q", "-m", "policies")
	write(t, filepath.Join(r, "team", "scope.rego"), "package palace.scope\n# changed\n")

	ctx := context.Background()
	pol := filepath.Join(r, ".palace", "policies")
	for _, c := range []struct{ path, want string }{
		{filepath.Join(pol, "plain.rego"), "tracked"},
		{filepath.Join(pol, "to-tracked.rego"), "tracked"},
		{filepath.Join(pol, "to-modified.rego"), "modified"},
		{filepath.Join(pol, "to-untracked.rego"), "untracked"},
		{filepath.Join(pol, "to-outside.rego"), "untracked"},
		{filepath.Join(pol, "to-other.rego"), "untracked"},
		{filepath.Join(r, "linked", "gate.rego"), "tracked"},
		{filepath.Join(r, "other-link", "policies", "gate.rego"), "untracked"},
	} {
		if got := policyfile.State(ctx, c.path); got != c.want {
			t.Errorf("State(%s) = %s, want %s", c.path, got, c.want)
		}
	}
}
