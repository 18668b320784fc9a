package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// secondRepo makes another git checkout that shares e's palace home.
func (e *env) secondRepo(name, remote string) string {
	e.t.Helper()
	dir := filepath.Join(filepath.Dir(e.dir), name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		e.t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"remote", "add", "origin", remote}, {"commit", "-q", "--allow-empty", "-m", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e")
		if out, err := cmd.CombinedOutput(); err != nil {
			e.t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

// In agent mode --all-repos reads nothing of another repository until a
// person allows it for the workspace (human mode, exit 3 for an agent);
// doctor shows the decision, and a deny takes it back. A signal on the
// other repository's card is refused with exit 2 and not recorded.
func TestAgentAllReposNeedsAPersonsPermission(t *testing.T) {
	e := newEnv(t)
	other := e.secondRepo("other", "git@github.com:acme/other.git")
	in := func(dir string, args ...string) result { return e.runIn(dir, nil, args...) }
	ev := strings.TrimSpace(in(other, "record", "--content", "keys rotate weekly", "--field", "ops", "--format", "json").stdout)
	evID := ev[strings.Index(ev, `"ev_`)+1:]
	evID = evID[:strings.Index(evID, `"`)]
	r := in(other, "distill", "--statement", "Rotate signing keys on Mondays", "--tier", "shu", "--field", "ops", "--supporting", evID,
		"--direct", "--status", "promoted", "--reason", "seed", "--format", "json")
	wantCode(t, r, 0)
	card := r.stdout[strings.Index(r.stdout, `"kc_`)+1:]
	card = card[:strings.Index(card, `"`)]

	reads := [][]string{
		{"context", "signing keys", "--all-repos"},
		{"brief", "signing keys", "--all-repos"},
		{"card", "list", "--all-repos"},
		{"card", "list", "--anchor", "all", "--all-repos"},
		{"card", "show", card, "--all-repos"},
		{"card", "events", card, "--all-repos"},
		{"evidence", "list", "--all-repos"},
		{"evidence", "show", evID, "--all-repos"},
		{"audit", "--all-repos"},
	}
	e.vars = []string{"PALACE_MODE=agent"}
	for _, args := range reads {
		wantCode(t, e.run(args...), 3, "agent mode does not read other repositories' memory unless a person allowed it", "palace workspace allow-all-repos")
	}
	wantCode(t, e.run("workspace", "allow-all-repos"), 3, "refused in agent mode")
	wantCode(t, e.run("adopt", "rejected", "--card", card, "--note", "wrong"), 2, "is not in this checkout's memory")
	e.vars = nil
	if st := e.jsonOf("adoption", "stats"); st["total"] != float64(0) {
		t.Errorf("a refused signal was recorded: %v", st)
	}
	if !strings.Contains(e.ok("doctor"), "no one allowed all_repos here") {
		t.Errorf("doctor does not say agents read only this checkout")
	}

	wantCode(t, e.runIn(t.TempDir(), nil, "workspace", "allow-all-repos"), 2, "is not inside a git checkout")
	out := e.ok("workspace", "allow-all-repos", "--reason", "cross-team review")
	if !strings.Contains(out, "allowed by ") || !strings.Contains(out, "cross-team review") {
		t.Errorf("allow-all-repos: %s", out)
	}
	if doc := e.ok("doctor"); !strings.Contains(doc, "agents may read every repository's memory from here") || !strings.Contains(doc, "allowed by ") {
		t.Errorf("doctor does not show the permission:\n%s", doc)
	}
	e.vars = []string{"PALACE_MODE=agent"}
	for _, args := range reads {
		wantCode(t, e.run(args...), 0)
	}
	if out := e.ok("context", "rotate signing keys on mondays", "--all-repos"); !strings.Contains(out, "Rotate signing keys on Mondays") {
		t.Errorf("allowed: the other repository's card is not in the pack:\n%s", out)
	}
	e.vars = nil
	e.ok("workspace", "deny-all-repos")
	e.vars = []string{"PALACE_MODE=agent"}
	wantCode(t, e.run("context", "signing keys", "--all-repos"), 3, "palace workspace allow-all-repos")
	// A person still reads what they ask for.
	e.vars = nil
	wantCode(t, e.run("card", "list", "--all-repos"), 0)
}
