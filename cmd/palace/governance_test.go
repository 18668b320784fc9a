package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const allowAllGate = `package palace.gate

import rego.v1

decision := {"allow": true, "reasons": ["anything goes"], "missing": {}}
`

// An untracked allow-all gate.rego dropped into the checkout cannot make a
// card canonical; --allow-local-policy lets it, and the event says so; once
// committed it decides like any team policy.
func TestUntrackedPolicyCannotCanonicalise(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sup := e.record("an agent saw it once", "--field", "laws")
	card := e.distill("Every change is reviewed", "dao_tian", "--supporting", sup)
	path := e.writeRepoPolicy("gate.rego", []byte(allowAllGate))

	r := e.run("gate", card, "--format", "json")
	var g struct {
		Allow   bool     `json:"allow"`
		Reasons []string `json:"reasons"`
		Policy  struct {
			Source    string `json:"source"`
			File      string `json:"file"`
			FileState string `json:"file_state"`
		} `json:"policy"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &g); err != nil || r.code != 1 {
		t.Fatalf("gate: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	if g.Allow || g.Policy.Source != "repo" || g.Policy.File != path || g.Policy.FileState != "untracked" ||
		!strings.Contains(strings.Join(g.Reasons, "|"), "is untracked in git") {
		t.Fatalf("gate under an untracked policy = %+v", g)
	}
	r = e.run("promote", card, "--reason", "policy says so")
	if r.code != 1 || !strings.Contains(r.stdout+r.stderr, "--allow-local-policy") {
		t.Fatalf("promote under an untracked policy: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if doc := e.run("doctor"); !strings.Contains(doc.stdout, "gate.rego (untracked)") {
		t.Errorf("doctor does not list the local policy:\n%s", doc.stdout)
	}
	out := e.ok("promote", card, "--reason", "I wrote that policy", "--allow-local-policy")
	if !strings.Contains(out, "untracked) allowed by --allow-local-policy") {
		t.Errorf("promote output does not name the local policy:\n%s", out)
	}
	evs := e.jsonOf("card", "events", card)["events"].([]any)
	last := evs[len(evs)-1].(map[string]any)
	data, _ := json.Marshal(last["data"])
	if last["type"] != "promoted" || !strings.Contains(string(data), `"allow_local_policy":true`) || !strings.Contains(string(data), `"policy_file_state":"untracked"`) {
		t.Fatalf("promote event = %v", last)
	}

	// Committed, the same policy is the team's: no flag needed.
	sup2 := e.record("another observation", "--field", "laws")
	card2 := e.distill("Every release is tagged", "dao_tian", "--supporting", sup2)
	e.git("add", path)
	e.git("commit", "-q", "-m", "team gate")
	if r := e.run("promote", card2, "--reason", "team policy"); r.code != 0 {
		t.Fatalf("promote under the committed policy: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Modified after the commit, it is local again.
	if err := os.WriteFile(path, []byte(allowAllGate+"\n# local tweak\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sup3 := e.record("a third observation", "--field", "laws")
	card3 := e.distill("Every tag is signed", "dao_tian", "--supporting", sup3)
	if r := e.run("promote", card3, "--reason", "x"); r.code != 1 || !strings.Contains(r.stdout, "is modified in git") {
		t.Fatalf("promote under a modified policy: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// The exit codes of the anchor rules and the new commands.
func TestGovernanceExitCodes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	outside := t.TempDir()
	r := e.runIn(outside, nil, "record", "--content", "from nowhere")
	if r.code != 2 || !strings.Contains(r.stderr, "--anchor global") {
		t.Fatalf("record outside git: exit %d\n%s", r.code, r.stderr)
	}
	if r := e.runIn(outside, nil, "record", "--content", "from nowhere", "--anchor", "global"); r.code != 0 {
		t.Fatalf("record outside git with --anchor global: exit %d\n%s", r.code, r.stderr)
	}
	first := e.jsonOf("record", "--content", "same words")
	again := e.jsonOf("record", "--content", "same words")
	if again["id"] != first["id"] || again["existing"] != true {
		t.Fatalf("re-record = %v, want %v existing", again, first["id"])
	}
	if out := e.ok("record", "--content", "same words"); !strings.Contains(out, "already recorded as "+first["id"].(string)) {
		t.Errorf("re-record text does not say so:\n%s", out)
	}
	dup := e.jsonOf("record", "--content", "same words", "--allow-duplicate")
	if dup["id"] == first["id"] || dup["duplicate_of"] != first["id"] {
		t.Fatalf("--allow-duplicate = %v", dup)
	}

	// Another repository's card: mutations exit 2 naming its anchor.
	other := filepath.Join(t.TempDir(), "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"remote", "add", "origin", "git@github.com:acme/other.git"}} {
		if out, err := exec.Command("git", append([]string{"-C", other}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	card := e.distill("Open SQLite in WAL mode", "qi", "--supporting", first["id"].(string), "--direct", "--status", "promoted")
	r = e.runIn(other, nil, "retire", card, "--reason", "not mine")
	if r.code != 2 || !strings.Contains(r.stderr, "anchored to worktree") || !strings.Contains(r.stderr, e.dir) {
		t.Fatalf("retire another repo's card: exit %d\n%s", r.code, r.stderr)
	}
	if r := e.runIn(other, nil, "card", "show", card); r.code != 2 || !strings.Contains(r.stderr, "--all-repos") {
		t.Fatalf("card show of another repo's card: exit %d\n%s", r.code, r.stderr)
	}
	if r := e.runIn(other, nil, "card", "show", card, "--all-repos"); r.code != 0 {
		t.Fatalf("card show --all-repos: exit %d\n%s", r.code, r.stderr)
	}
	if r := e.runIn(other, nil, "card", "list", "--anchor", "all"); r.code != 2 {
		t.Fatalf("card list --anchor all without --all-repos: exit %d", r.code)
	}

	// resolve: usage and mode.
	if r := e.run("resolve", card, "--verification", dup["id"].(string), "--reason", "r"); r.code != 2 || !strings.Contains(r.stderr, "not contested") {
		t.Fatalf("resolve of a card not contested: exit %d\n%s", r.code, r.stderr)
	}
	agent := append([]string{}, e.vars...)
	e.vars = append(e.vars, "PALACE_MODE=agent")
	if r := e.run("resolve", card, "--verification", dup["id"].(string), "--reason", "r"); r.code != 3 {
		t.Fatalf("resolve in agent mode: exit %d\n%s", r.code, r.stderr)
	}
	if r := e.run("record", "--content", "a person said", "--provenance", "human"); r.code != 3 {
		t.Fatalf("agent human provenance: exit %d\n%s", r.code, r.stderr)
	}
	e.vars = agent
	if r := e.run("distill", "--statement", "s", "--tier", "shu", "--anchor", "global", "--supporting", first["id"].(string)); r.code != 2 || !strings.Contains(r.stderr, "publish it outward") {
		t.Fatalf("distill shu --anchor global: exit %d\n%s", r.code, r.stderr)
	}
	if r := e.run("distill", "--statement", "s", "--tier", "qi", "--expires-at", "2020-01-01", "--supporting", first["id"].(string)); r.code != 2 || !strings.Contains(r.stderr, "expires_at") {
		t.Fatalf("distill with a past expiry: exit %d\n%s", r.code, r.stderr)
	}
	if r := e.run("audit", "--candidates"); r.code != 0 {
		t.Fatalf("audit --candidates: exit %d\n%s", r.code, r.stderr)
	}
}

// An import killed mid-way and re-run writes each row once.
func TestKilledImportRerunsOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const rows = 6000
	var b strings.Builder
	for i := range rows {
		fmt.Fprintf(&b, "{\"content\": \"import row %d\", \"field\": \"bulk\"}\n", i)
	}
	file := filepath.Join(t.TempDir(), "rows.jsonl")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	total := func() int {
		v := e.jsonOf("evidence", "list", "--field", "bulk", "--limit", "1")
		return int(v["total"].(float64))
	}
	cmd := exec.Command(palaceBin, "record", "--jsonl", file)
	cmd.Dir = e.dir
	cmd.Env = append(filteredEnv(), "PALACE_HOME="+e.home, "USER=tester")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	killed := false
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		select {
		case <-done:
			deadline = time.Time{}
		default:
		}
		if deadline.IsZero() {
			break
		}
		if n := total(); n > 0 && n < rows {
			_ = cmd.Process.Signal(syscall.SIGKILL)
			<-done
			killed = true
			break
		}
	}
	before := total()
	if before%1000 != 0 {
		t.Fatalf("%d rows committed by the killed import: not whole batches", before)
	}
	if !killed {
		t.Logf("the import finished before it could be killed (%d rows); checking the re-run only", before)
	}
	out := e.jsonOf("record", "--jsonl", file)
	if got := total(); got != rows {
		t.Fatalf("after the re-run %d rows, want %d", got, rows)
	}
	if int(out["imported"].(float64)) != rows-before || int(out["existing"].(float64)) != before {
		t.Fatalf("re-run imported %v, existing %v; want %d and %d", out["imported"], out["existing"], rows-before, before)
	}
	again := e.jsonOf("record", "--jsonl", file)
	if again["imported"].(float64) != 0 || int(again["existing"].(float64)) != rows || total() != rows {
		t.Fatalf("a third run = %v, total %d", again, total())
	}
}

// The pack says which policy file decided scope and lanes and how git sees it.
func TestPackSaysHowGitSeesItsPolicies(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.writeRepoPolicy("scope.rego", []byte(`package palace.scope

import rego.v1

decision := {c.id: {"applies": true, "scope_fit": 10, "operation_fit": 0, "why": ["team: everything applies"]} | some c in input.cards}
`))
	state := func() (string, string) {
		p := e.jsonOf("context", "anything", "--dry-run")["policy"].(map[string]any)
		scope := p["scope"].(map[string]any)
		return scope["file"].(string), scope["file_state"].(string)
	}
	if file, st := state(); st != "untracked" || !strings.HasSuffix(file, "scope.rego") {
		t.Fatalf("pack scope policy %s is %q, want untracked", file, st)
	}
	e.git("add", ".palace/policies")
	e.git("commit", "-q", "-m", "adopt the defaults")
	if _, st := state(); st != "tracked" {
		t.Fatalf("after the commit the pack says %q, want tracked", st)
	}
}

// A gate.rego committed as a symbolic link is the team's only if the file
// it leads to is committed and unchanged in the same repository: a link to
// an untracked or modified file is local policy, and one that leads out of
// the checkout never even loads.
func TestLinkedPolicyIsCommittedOnlyIfItsFileIs(t *testing.T) {
	t.Parallel()
	gateState := func(e *env, card string) (state, file string, allow bool, reasons string) {
		r := e.run("gate", card, "--format", "json")
		var g struct {
			Allow   bool     `json:"allow"`
			Reasons []string `json:"reasons"`
			Policy  struct {
				File      string `json:"file"`
				FileState string `json:"file_state"`
			} `json:"policy"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &g); err != nil {
			t.Fatalf("gate: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
		}
		return g.Policy.FileState, g.Policy.File, g.Allow, strings.Join(g.Reasons, "|")
	}
	newCard := func(e *env, s string) string {
		return e.distill(s, "qi", "--supporting", e.record("seen: "+s))
	}
	link := filepath.Join(".palace", "policies", "gate.rego")

	t.Run("link committed, its file untracked", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.write(filepath.Join("local", "gate.rego"), []byte(allowAllGate))
		mustSymlink(t, filepath.Join("..", "..", "local", "gate.rego"), filepath.Join(e.dir, link))
		e.git("add", link)
		e.git("commit", "-q", "-m", "gate as a link")
		card := newCard(e, "Links are reviewed")
		state, file, allow, reasons := gateState(e, card)
		if state != "untracked" || allow || !strings.Contains(reasons, "-> "+filepath.Join(e.dir, "local", "gate.rego")+") is untracked in git") {
			t.Fatalf("gate = %s %s allow=%v %s; want untracked, denied, naming where the link leads", file, state, allow, reasons)
		}
		wantCode(t, e.run("promote", card, "--reason", "the link says so"), 1)
		if st := e.jsonOf("card", "show", card)["status"]; st != "candidate" {
			t.Fatalf("promoted through an untracked file: %v", st)
		}
		e.ok("promote", card, "--reason", "I wrote it", "--allow-local-policy")
		// Once the file itself is committed, the link is the team's policy.
		e.git("add", "local")
		e.git("commit", "-q", "-m", "the gate itself")
		card2 := newCard(e, "Files are reviewed")
		if state, _, allow, _ := gateState(e, card2); state != "tracked" || !allow {
			t.Fatalf("link to a committed file: %s allow=%v, want tracked and allowed", state, allow)
		}
		e.ok("promote", card2, "--reason", "team gate")
		// Modified, it is local again, though the link is unchanged.
		if err := os.WriteFile(filepath.Join(e.dir, "local", "gate.rego"), []byte(allowAllGate+"\n# tweak\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		card3 := newCard(e, "Tweaks are reviewed")
		if state, _, _, _ := gateState(e, card3); state != "modified" {
			t.Fatalf("link to a modified file: %s, want modified", state)
		}
		wantCode(t, e.run("promote", card3, "--reason", "tweaked"), 1)
	})

	t.Run("link committed, its file outside git", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		outside := filepath.Join(t.TempDir(), "gate.rego")
		if err := os.WriteFile(outside, []byte(allowAllGate), 0o644); err != nil {
			t.Fatal(err)
		}
		mustSymlink(t, outside, filepath.Join(e.dir, link))
		e.git("add", link)
		e.git("commit", "-q", "-m", "gate as a link out")
		card := newCard(e, "Outside files decide nothing")
		r := e.run("promote", card, "--reason", "the outside gate says so")
		if r.code != 1 || !strings.Contains(r.stdout+r.stderr, "resolves to "+outside) {
			t.Fatalf("promote: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		if st := e.jsonOf("card", "show", card)["status"]; st != "candidate" {
			t.Fatalf("promoted by a gate outside the repository: %v", st)
		}
	})
}
