package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWakeUpPackFromTheCLI: with no task, `palace context` and a
// SessionStart hook render the wake-up layer — one dao_tian law by
// default, none with --dao-tian-limit 0, the foundational card, the
// repository's core cards — within the budget, and a pack with nothing
// to show says why in its text, --explain, JSON and the brief.
func TestWakeUpPackFromTheCLI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	law := func(s string) string {
		return e.distill(s, "dao_tian", "--supporting", e.record("taught: "+s), "--direct", "--status", "canonical")
	}
	laws := []string{law("Never commit a secret to any repository"), law("State what you did not verify")}
	found := e.distill("All storage goes through the store package", "dao_ren", "--anchor", "repo", "--persistence", "foundational",
		"--supporting", e.record("seen: storage"), "--direct", "--status", "promoted")
	core := e.distill("Wrap every error with the operation that failed", "shu", "--anchor", "repo",
		"--supporting", e.record("seen: errors"), "--direct", "--status", "promoted")
	count := func(s string, ids []string) int {
		n := 0
		for _, id := range ids {
			n += strings.Count(s, id)
		}
		return n
	}
	text := e.ok("context", "--dry-run")
	if count(text, laws) != 1 || !strings.Contains(text, found) || !strings.Contains(text, core) || !strings.Contains(text, "## Foundations") {
		t.Errorf("wake-up pack:\n%s", text)
	}
	if text := e.ok("context", "--dry-run", "--dao-tian-limit", "0"); count(text, laws) != 0 || !strings.Contains(text, found) {
		t.Errorf("--dao-tian-limit 0:\n%s", text)
	}
	pack := e.jsonOf("context", "--dry-run", "--budget", "520")
	budget := pack["budget"].(map[string]any)
	if used := budget["used"].(float64); used > 520 || budget["over"].(bool) || !strings.Contains(pack["rendered"].(string), found) {
		t.Errorf("budget 520: used %v:\n%s", used, pack["rendered"])
	}

	raw, err := os.ReadFile(filepath.Join("testdata", "hooks", "claude-code-session-start.json"))
	if err != nil {
		t.Fatal(err)
	}
	cwd, _ := json.Marshal(e.dir)
	r := e.runIn(t.TempDir(), bytes.ReplaceAll(raw, []byte(`"{{CWD}}"`), cwd), "context", "--hook", "claude-code", "--budget", "3000", "--dry-run")
	wantCode(t, r, 0)
	if count(r.stdout, laws) != 1 || !strings.Contains(r.stdout, found) || !strings.Contains(r.stdout, core) {
		t.Errorf("SessionStart hook:\n%s", r.stdout)
	}

	// A checkout whose only cards are tool notes: nothing wakes, and the
	// pack says why everywhere.
	q := newEnv(t)
	q.distill("Pin the sqlite version in go.mod", "qi", "--anchor", "repo", "--supporting", q.record("seen: sqlite"), "--direct", "--status", "promoted")
	text = q.ok("context", "--dry-run")
	const why = "No task was named, so the pack holds the wake-up layer"
	if !strings.Contains(text, "No card is injected for this request. "+why) {
		t.Errorf("empty wake-up pack:\n%s", text)
	}
	if x := q.ok("context", "--dry-run", "--explain"); !strings.Contains(x, "why empty: "+why) {
		t.Errorf("--explain:\n%s", x)
	}
	if reason := q.jsonOf("context", "--dry-run")["memory_exists"].(map[string]any)["reason"].(string); !strings.HasPrefix(reason, why) {
		t.Errorf("JSON reason %q", reason)
	}
	if b := q.ok("brief"); !strings.Contains(b, why) {
		t.Errorf("brief:\n%s", b)
	}
}

// TestDistillNamesNearDuplicates: an agent's distill of a statement one
// word away from an existing card is written, and the warning names the
// existing card; distill --from raises a tier.
func TestDistillNamesNearDuplicates(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	first := e.distill("Budget filler rule number 1: keep handlers small", "shu", "--supporting", e.record("seen: handlers"))
	e.vars = []string{"PALACE_MODE=agent"}
	r := e.run("distill", "--statement", "Budget filler rule number 2: keep handlers small", "--tier", "shu", "--supporting", e.record("seen again"), "--format", "json")
	wantCode(t, r, 0, "warning: near-duplicate of "+first)
	var c struct {
		ID             string `json:"id"`
		NearDuplicates []struct {
			ID string `json:"id"`
		} `json:"near_duplicates"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &c); err != nil || len(c.NearDuplicates) != 1 || c.NearDuplicates[0].ID != first {
		t.Errorf("near_duplicates %+v (%v)", c, err)
	}
	up := e.jsonOf("distill", "--from", first, "--tier", "dao_ren")
	if up["supersedes"] != first || up["tier"] != "dao_ren" || up["status"] != "candidate" {
		t.Errorf("distill --from: %v", up)
	}
}
