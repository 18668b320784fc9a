package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// evidence records n pieces of evidence and returns their ids.
func (e *env) evidence(n int, field string) []string {
	e.t.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = e.record("observation "+field+" "+string(rune('a'+i)), "--field", field)
	}
	return ids
}

func TestSeedGateTable(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ev := e.evidence(8, "general")
	tests := []struct {
		name, tier                  string
		support, verify, teach, cex []string
		reviewerAgent               bool
		allow                       bool
		missing                     map[string]any
	}{
		{"qi 1+1", "qi", ev[:1], ev[1:2], nil, nil, false, true, map[string]any{}},
		{"qi short verification", "qi", ev[:1], nil, nil, nil, false, false, map[string]any{"verification": 1.0}},
		{"shu 1+1", "shu", ev[:1], ev[1:2], nil, nil, false, true, map[string]any{}},
		{"shu short verification", "shu", ev[:1], nil, nil, nil, false, false, map[string]any{"verification": 1.0}},
		{"dao_ren 2+1", "dao_ren", ev[:2], ev[2:3], nil, nil, false, true, map[string]any{}},
		{"dao_ren 1+1", "dao_ren", ev[:1], ev[2:3], nil, nil, false, false, map[string]any{"supporting": 1.0}},
		{"dao_tian 3+2+1 human", "dao_tian", ev[:3], ev[3:5], ev[5:6], nil, false, true, map[string]any{}},
		{"dao_tian 2+1+0 human", "dao_tian", ev[:2], ev[3:4], nil, nil, false, false, map[string]any{"supporting": 1.0, "verification": 1.0, "teaching": 1.0}},
		{"dao_tian 3+2+1 agent", "dao_tian", ev[:3], ev[3:5], ev[5:6], nil, true, false, map[string]any{}},
		{"qi counterexample blocks", "qi", ev[:1], ev[1:2], nil, ev[6:7], false, false, map[string]any{}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"--supporting", strings.Join(tt.support, ",")}
			if tt.verify != nil {
				args = append(args, "--verification", strings.Join(tt.verify, ","))
			}
			if tt.teach != nil {
				args = append(args, "--teaching", strings.Join(tt.teach, ","))
			}
			if tt.cex != nil {
				args = append(args, "--counterexample", strings.Join(tt.cex, ","))
			}
			id := e.distill(tt.name+" statement "+string(rune('A'+i)), tt.tier, args...)
			gateArgs := []string{"gate", id, "--format", "json"}
			if tt.reviewerAgent {
				gateArgs = append([]string{"--mode", "agent"}, gateArgs...)
			}
			r := e.run(gateArgs...)
			var g map[string]any
			if err := json.Unmarshal([]byte(r.stdout), &g); err != nil {
				t.Fatalf("gate output is not JSON: %v\n%s\n%s", err, r.stdout, r.stderr)
			}
			if g["allow"] != tt.allow {
				t.Fatalf("allow = %v, want %v; reasons %v", g["allow"], tt.allow, g["reasons"])
			}
			if wantExit := map[bool]int{true: 0, false: 1}[tt.allow]; r.code != wantExit {
				t.Errorf("exit %d, want %d", r.code, wantExit)
			}
			if !reflect.DeepEqual(g["missing"], tt.missing) {
				t.Errorf("missing = %v, want %v", g["missing"], tt.missing)
			}
			if reasons, _ := g["reasons"].([]any); len(reasons) == 0 {
				t.Errorf("no reasons in %v", g)
			}
		})
	}
}

func cardState(t *testing.T, e *env, id string) (map[string]any, []any) {
	t.Helper()
	card := e.jsonOf("card", "show", id)
	events := e.jsonOf("card", "events", id)["events"].([]any)
	return card, events
}

func TestDeniedPromoteChangesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ev := e.evidence(2, "general")
	id := e.distill("Denied cards stay as they are", "dao_ren", "--supporting", ev[0])
	beforeCard, beforeEvents := cardState(t, e, id)

	r := e.run("promote", id, "--reason", "try", "--verification", ev[1])
	wantCode(t, r, 1, "gate denied", "supporting: have 1, need 2")
	if !strings.Contains(r.stdout, "DENIED") {
		t.Errorf("stdout does not show the gate's answer: %s", r.stdout)
	}
	afterCard, afterEvents := cardState(t, e, id)
	if !reflect.DeepEqual(beforeCard, afterCard) {
		t.Errorf("card changed on a denied promote:\nbefore %v\nafter  %v", beforeCard, afterCard)
	}
	if !reflect.DeepEqual(beforeEvents, afterEvents) {
		t.Errorf("events changed on a denied promote: %d → %d", len(beforeEvents), len(afterEvents))
	}
}

func TestPromoteRecordsPolicyDecision(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ev := e.evidence(2, "general")
	id := e.distill("Promoted cards carry their decision", "qi", "--supporting", ev[0])
	out := e.jsonOf("promote", id, "--reason", "verified in CI", "--verification", ev[1])
	if got := out["card"].(map[string]any)["status"]; got != "promoted" {
		t.Fatalf("status = %v", got)
	}
	_, events := cardState(t, e, id)
	last := events[len(events)-1].(map[string]any)
	if last["type"] != "promoted" || last["policy"] != "palace.gate" || last["policy_hash"] == "" {
		t.Fatalf("promoted event lacks the policy: %v", last)
	}
	dec := last["decision"].(map[string]any)
	if dec["allow"] != true || dec["policy"].(map[string]any)["hash"] != last["policy_hash"] {
		t.Errorf("decision JSON = %v", dec)
	}
	linked := events[len(events)-2].(map[string]any)
	if linked["type"] != "linked" {
		t.Errorf("verification link was not an event: %v", linked)
	}
}

func TestAgentModeRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ev := e.evidence(3, "general")
	id := e.distill("Agents cannot promote", "qi", "--supporting", ev[0], "--verification", ev[1])
	cases := [][]string{
		{"promote", id, "--reason", "r"},
		{"demote", id, "--reason", "r", "--counterexample", ev[2]},
		{"retire", id, "--reason", "r"},
		{"publish", id, "--to", "repo", "--reason", "r"},
		{"distill", "--statement", "direct", "--tier", "qi", "--supporting", ev[0], "--direct", "--status", "promoted"},
	}
	for _, args := range cases {
		t.Run(args[0], func(t *testing.T) {
			r := e.run(append([]string{"--mode", "agent"}, args...)...)
			wantCode(t, r, 3, "agent mode")
			e.vars = []string{"PALACE_MODE=agent"}
			r = e.run(append([]string{"--mode", "human"}, args...)...)
			e.vars = nil
			wantCode(t, r, 3, "agent mode")
		})
	}
	if c, _ := cardState(t, e, id); c["status"] != "candidate" {
		t.Fatalf("status = %v after refused changes", c["status"])
	}
}

func TestDistillRefErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ev := e.evidence(1, "general")
	card := e.distill("First of its kind", "qi", "--supporting", ev[0])
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"card as ref", []string{"--statement", "x", "--tier", "qi", "--supporting", card}, []string{card, "is a card"}},
		{"unknown ref", []string{"--statement", "x", "--tier", "qi", "--supporting", ev[0], "--verification", "ev_nope"}, []string{"ev_nope", "no such evidence"}},
		{"no supporting", []string{"--statement", "x", "--tier", "qi"}, []string{"--supporting"}},
		{"duplicate statement", []string{"--statement", "  first OF its kind. ", "--tier", "shu", "--supporting", ev[0]}, []string{card, "same statement"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := e.jsonOf("card", "list", "--anchor", "all", "--all-repos")
			r := e.run(append([]string{"distill"}, tt.args...)...)
			wantCode(t, r, 2, tt.want...)
			if after := e.jsonOf("card", "list", "--anchor", "all", "--all-repos"); !reflect.DeepEqual(before, after) {
				t.Error("a refused distill wrote a card")
			}
		})
	}
}

func TestPublishOneStepWithProvenance(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ev := e.evidence(3, "general")
	id := e.distill("Published cards keep their origin", "qi", "--supporting", ev[0], "--verification", ev[1])
	e.ok("promote", id, "--reason", "ok")

	wantCode(t, e.run("publish", id, "--to", "global", "--reason", "skip a step"), 2, "one step at a time", "--to repo")

	out := e.jsonOf("publish", id, "--to", "repo", "--reason", "holds repo-wide")
	cp := out["copy"].(map[string]any)
	orig := out["original"].(map[string]any)
	copyID := cp["id"].(string)
	if cp["origin_card"] != id || orig["published_to"] != copyID {
		t.Fatalf("provenance missing: copy %v original %v", cp["origin_card"], orig["published_to"])
	}
	if cp["anchor"].(map[string]any)["kind"] != "repo" || orig["anchor"].(map[string]any)["kind"] != "worktree" {
		t.Fatalf("anchors: copy %v original %v", cp["anchor"], orig["anchor"])
	}
	if len(cp["links"].([]any)) != len(orig["links"].([]any)) {
		t.Errorf("copy has %d links, original %d", len(cp["links"].([]any)), len(orig["links"].([]any)))
	}
	wantCode(t, e.run("publish", id, "--to", "repo", "--reason", "again"), 2, "published already")

	e.ok("demote", copyID, "--reason", "wrong repo-wide", "--counterexample", ev[2])
	if c, _ := cardState(t, e, copyID); c["status"] != "demoted" {
		t.Fatalf("copy status = %v", c["status"])
	}
	origAfter, events := cardState(t, e, id)
	if origAfter["status"] != "promoted" {
		t.Fatalf("demoting the copy changed the original to %v", origAfter["status"])
	}
	if last := events[len(events)-1].(map[string]any); last["type"] != "published" {
		t.Errorf("original's last event = %v, want published", last["type"])
	}
}

const strictQiGate = `package palace.gate

import rego.v1

default decision := {"allow": false, "reasons": ["team rule: qi cards need 2 verification refs"], "missing": {"verification": 1}}

decision := {"allow": true, "reasons": ["team rule met"], "missing": {}} if input.counts.verification >= 2
`

func TestTeamGatePolicy(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ev := e.evidence(3, "general")
	id := e.distill("Team policy decides", "qi", "--supporting", ev[0], "--verification", ev[1])
	e.ok("gate", id)

	dir := filepath.Join(e.dir, ".palace", "policies")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "gate.rego"), []byte(strictQiGate), 0o644); err != nil {
		t.Fatal(err)
	}
	// A team policy is committed: an uncommitted one cannot make a card authoritative.
	e.git("add", ".palace/policies/gate.rego")
	e.git("commit", "-q", "-m", "team gate")
	r := e.run("gate", id, "--format", "json")
	wantCode(t, r, 1)
	if !strings.Contains(r.stdout, "team rule: qi cards need 2 verification refs") {
		t.Fatalf("team policy did not decide: %s", r.stdout)
	}
	out := e.jsonOf("promote", id, "--reason", "two verifications", "--verification", ev[2])
	teamHash := out["event"].(map[string]any)["policy_hash"].(string)
	dec := out["event"].(map[string]any)["decision"].(map[string]any)
	if dec["policy"].(map[string]any)["source"] != "repo" || !strings.Contains(r.stdout, teamHash) {
		t.Fatalf("event hash %s / decision %v do not show the team policy (gate said %s)", teamHash, dec["policy"], r.stdout)
	}

	e.git("rm", "-q", ".palace/policies/gate.rego")
	e.git("commit", "-q", "-m", "no team gate")
	id2 := e.distill("Default policy decides again", "qi", "--supporting", ev[0], "--verification", ev[1])
	e.ok("gate", id2)
}

// TestExampleTeamGateSeesScope adopts examples/team-policies and checks its
// store/** rule sees the card's scope paths through the gate input.
func TestExampleTeamGateSeesScope(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := filepath.Join(e.dir, ".palace", "policies")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join("..", "..", "examples", "team-policies", "gate.rego"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "gate.rego"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	e.git("add", ".palace/policies/gate.rego")
	e.git("commit", "-q", "-m", "adopt the example team gate")
	ev := e.evidence(3, "general")
	scoped := e.distill("Store code closes rows", "qi", "--supporting", ev[0], "--verification", ev[1], "--scope-path", "store/**")
	plain := e.distill("Handlers log request ids", "qi", "--supporting", ev[0], "--verification", ev[1], "--scope-path", "api/**")
	r := e.run("gate", scoped)
	wantCode(t, r, 1)
	if !strings.Contains(r.stdout, "store: qi cards about store/** need 2 verification refs, have 1") {
		t.Fatalf("team rule did not see the scope: %s", r.stdout)
	}
	e.ok("gate", plain)
}

// TestCardShowCountsAsAView: `palace card show` is how a pack's ref-only
// lines tell an agent to fetch a card, so each one is a view (the audit's
// 30-day counts show it); --format json prints the same card.
func TestCardShowCountsAsAView(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ev := e.evidence(2, "general")
	id := e.distill("Views warm a card", "qi", "--supporting", ev[0], "--verification", ev[1], "--direct", "--status", "promoted")
	e.ok("card", "show", id)
	if got := e.jsonOf("card", "show", id)["id"]; got != id {
		t.Fatalf("card show --format json printed %v", got)
	}
	for _, row := range e.jsonOf("audit")["rows"].([]any) {
		r := row.(map[string]any)
		if r["id"] == id {
			if v := r["counts_30d"].(map[string]any)["viewed"]; v != float64(2) {
				t.Errorf("viewed = %v after two card shows, want 2", v)
			}
			return
		}
	}
	t.Fatalf("the audit does not list %s", id)
}

// TestDistillVerbatimListFlags: a repeated --trigger-pattern or --scope-path
// carries one value as written (a regexp with a comma or a quote, a glob
// with braces); the comma lists stay for ids; a value CSV-quoted the way the
// flags used to need arrives unwrapped.
func TestDistillVerbatimListFlags(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ev := e.evidence(2, "general")
	got := e.jsonOf("distill", "--statement", "Patterns stay whole", "--tier", "qi", "--supporting", ev[0]+","+ev[1],
		"--trigger-pattern", "a{1,3}", "--trigger-pattern", `say "hi"`, "--trigger-pattern", `"x,""y"""`,
		"--scope-path", "{api,web}/**", "--scope-path", "docs/**")
	trig := got["trigger"].(map[string]any)["patterns"].([]any)
	if want := []any{"a{1,3}", `say "hi"`, `x,"y"`}; !reflect.DeepEqual(trig, want) {
		t.Errorf("patterns %q, want %q", trig, want)
	}
	paths := got["scope"].(map[string]any)["paths"].([]any)
	if want := []any{"{api,web}/**", "docs/**"}; !reflect.DeepEqual(paths, want) {
		t.Errorf("paths %q, want %q", paths, want)
	}
}
