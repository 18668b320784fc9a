package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func teamPolicy(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", "team-policies", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (e *env) writeRepoPolicy(name string, src []byte) string {
	e.t.Helper()
	dir := filepath.Join(e.dir, ".palace", "policies")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		e.t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, src, 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

func TestPolicyTeamGateChangesTheNextGate(t *testing.T) {
	e := newEnv(t)
	s := e.record("store.Begin retries on SQLITE_BUSY", "--field", "storage")
	v := e.record("verified: the retry loop ran 3 times under load", "--field", "storage")
	id := e.distill("Wrap multi-row writes in store.Tx", "qi", "--field", "storage", "--supporting", s, "--verification", v)

	if r := e.run("gate", id); r.code != 0 {
		t.Fatalf("default gate: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if out := e.ok("policy", "list"); !strings.Contains(out, "palace.gate      embedded  go") {
		t.Fatalf("list before:\n%s", out)
	}

	path := e.writeRepoPolicy("gate.rego", teamPolicy(t, "gate.rego"))
	r := e.run("gate", id)
	if r.code != 1 || !strings.Contains(r.stdout, "store: qi cards about store/** need 2 verification refs, have 1") {
		t.Fatalf("team gate: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	list := e.jsonOf("policy", "list")
	gate := list["points"].([]any)[0].(map[string]any)
	if gate["source"] != "repo" || gate["engine"] != "rego" || gate["files"].([]any)[0] != path {
		t.Fatalf("list with the team gate: %v", gate)
	}

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if r := e.run("gate", id); r.code != 0 {
		t.Fatalf("after removing the team gate: exit %d\n%s", r.code, r.stdout)
	}
}

func TestPolicyGateDeadline(t *testing.T) {
	e := newEnv(t)
	s := e.record("a")
	v := e.record("b")
	id := e.distill("A qi card", "qi", "--supporting", s, "--verification", v)
	e.writeRepoPolicy("gate.rego", []byte(`package palace.gate

import rego.v1

decision := {"allow": count(xs) > 0, "reasons": [], "missing": {}} if {
	xs := [x | some i in numbers.range(1, 1000000000); x := i * 2]
}
`))
	r := e.run("gate", id)
	if r.code != 1 || !strings.Contains(r.stdout, "deadline") || !strings.Contains(r.stdout, "gate.rego") {
		t.Fatalf("looping gate: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func TestPolicyTestExamples(t *testing.T) {
	e := newEnv(t)
	dir, _ := filepath.Abs(filepath.Join("..", "..", "examples", "team-policies"))
	r := e.run("policy", "test", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "PASS: 14/14") || strings.Contains(r.stdout, "FAIL") {
		t.Fatalf("example tests: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	broken := t.TempDir()
	for _, f := range []string{"gate.rego", "gate_test.rego", "scope.rego", "scope_test.rego", "mailbox.rego", "mailbox_test.rego"} {
		src := teamPolicy(t, f)
		if f == "scope_test.rego" {
			src = []byte(strings.Replace(string(src), "d.a.scope_fit == 25", "d.a.scope_fit == 26", 1))
		}
		if err := os.WriteFile(filepath.Join(broken, f), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r = e.run("policy", "test", broken)
	want := filepath.Join(broken, "scope_test.rego") + ":15:2: d.a.scope_fit == 26"
	if r.code != 1 || !strings.Contains(r.stdout, "test_matching_intent_is_boosted: FAIL\n  "+want) || !strings.Contains(r.stdout, "FAIL: 1/14") {
		t.Fatalf("changed assertion: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func TestPolicyCheck(t *testing.T) {
	e := newEnv(t)
	if out := e.ok("policy", "check"); !strings.HasPrefix(out, "ok: 0 policy files of yours") {
		t.Fatalf("check of the defaults: %s", out)
	}
	path := e.writeRepoPolicy("scope.rego", []byte("package palace.scope\n\nimport rego.v1\n\ndecision := {c.id: r | some c in input.cards; r := unknown_fn(c)}\n"))
	r := e.run("policy", "check")
	if r.code != 1 || !strings.HasPrefix(r.stdout, path+":5:") || !strings.Contains(r.stdout, "rego_type_error: undefined function unknown_fn") {
		t.Fatalf("check with an error: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A broken test file is an error too.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	e.writeRepoPolicy("scope_test.rego", []byte("package palace.scope_test\n\nimport rego.v1\n\ntest_x if nope\n"))
	if r := e.run("policy", "check", "--format", "json"); r.code != 1 || !strings.Contains(r.stdout, `"code": "rego_unsafe_var_error"`) {
		t.Fatalf("check of a broken test: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := e.run("policy", "check", filepath.Join(e.dir, "nope")); r.code != 2 {
		t.Fatalf("check of a missing dir: exit %d", r.code)
	}
}

func TestPolicyEval(t *testing.T) {
	e := newEnv(t)
	gateIn := []byte(`{"action": "promote", "target": "promoted", "card": {"id": "kc_1", "tier": "qi"},
		"counts": {"supporting": 1, "verification": 0}, "reviewer": {"name": "a", "type": "human"}, "mode": "human"}`)
	tests := []struct {
		name  string
		args  []string
		stdin []byte
		code  int
		out   string
	}{
		{"gate deny", []string{"policy", "eval", "gate", "--input", "-"}, gateIn, 1, `"verification: have 0, need 1"`},
		{"gate deny with rego", []string{"policy", "eval", "palace.gate", "--input", "-", "--engine", "rego", "--format", "json"}, gateIn, 1, `"engine": "rego"`},
		{"scope", []string{"policy", "eval", "scope", "--input", "-"},
			[]byte(`{"context": {"file": "store/db.go"}, "cards": [{"id": "a", "scope": {"paths": ["store/**"]}}]}`), 0, `"path store/db.go matches store/**"`},
		{"mailbox allows", []string{"policy", "eval", "mailbox", "--input", "-"}, []byte(`{"box": "project", "letter": {"what": "x"}}`), 0, "[]"},
		{"unknown field", []string{"policy", "eval", "gate", "--input", "-"}, []byte(`{"acton": "promote"}`), 2, ""},
		{"bad json", []string{"policy", "eval", "gate", "--input", "-"}, []byte(`{"action": `), 2, ""},
		{"unknown point", []string{"policy", "eval", "audit", "--input", "-"}, []byte(`{}`), 2, ""},
		{"missing input flag", []string{"policy", "eval", "gate"}, nil, 2, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.runIn(e.dir, tt.stdin, tt.args...)
			if r.code != tt.code || !strings.Contains(r.stdout, tt.out) {
				t.Fatalf("exit %d (want %d)\nstdout: %s\nstderr: %s", r.code, tt.code, r.stdout, r.stderr)
			}
		})
	}
	e.writeRepoPolicy("mailbox.rego", teamPolicy(t, "mailbox.rego"))
	r := e.runIn(e.dir, []byte(`{"box": "project", "letter": {"what": "x"}}`), "policy", "eval", "mailbox", "--input", "-")
	var deny []string
	if err := json.Unmarshal([]byte(r.stdout), &deny); err != nil || r.code != 1 || len(deny) != 1 || !strings.HasPrefix(deny[0], "letter has no repo") {
		t.Fatalf("team mailbox: exit %d %q %v", r.code, r.stdout, err)
	}
}

func TestPolicyFmt(t *testing.T) {
	e := newEnv(t)
	path := e.writeRepoPolicy("mailbox.rego", []byte("package palace.mailbox\nimport rego.v1\ndeny contains \"x\" if {   input.box == \"y\" }\n"))
	if r := e.run("policy", "fmt", "--check"); r.code != 1 || r.stdout != path+": not formatted\n" {
		t.Fatalf("fmt --check: exit %d %q", r.code, r.stdout)
	}
	if out := e.ok("policy", "fmt"); out != "formatted "+path+"\n" {
		t.Fatalf("fmt: %q", out)
	}
	b, _ := os.ReadFile(path)
	if want := "package palace.mailbox\n\nimport rego.v1\n\ndeny contains \"x\" if input.box == \"y\"\n"; string(b) != want {
		t.Fatalf("formatted file:\n%s", b)
	}
	if r := e.run("policy", "fmt", "--check"); r.code != 0 {
		t.Fatalf("fmt --check after fmt: exit %d %q", r.code, r.stdout)
	}
	bad := e.writeRepoPolicy("bad.rego", []byte("package palace.x\n\nx := {\n"))
	if r := e.run("policy", "fmt", "--check", bad); r.code != 1 || !strings.HasPrefix(r.stdout, bad+":") {
		t.Fatalf("fmt of a syntax error: exit %d %q", r.code, r.stdout)
	}
}

func TestPolicyLanesConfig(t *testing.T) {
	e := newEnv(t)
	path := e.writeRepoPolicy("lanes.json", []byte(`{"core_inline_limit": 2, "compact_char_limit": 120}`))
	var l struct {
		Lanes map[string]int `json:"lanes_config"`
		Files []struct{ Kind, Path string }
	}
	if err := json.Unmarshal([]byte(e.ok("policy", "list", "--format", "json")), &l); err != nil {
		t.Fatal(err)
	}
	if l.Lanes["core_inline_limit"] != 2 || l.Lanes["compact_char_limit"] != 120 || l.Lanes["scoped_inline_limit"] != 8 {
		t.Errorf("lanes config = %v", l.Lanes)
	}
	if out := e.ok("policy", "list"); !strings.Contains(out, "lanes config "+path+": core 2 · scoped 8") {
		t.Errorf("policy list does not show the lanes config:\n%s", out)
	}
	e.writeRepoPolicy("lanes.json", []byte(`{"core_inline_limit": -1}`))
	if r := e.run("policy", "check"); r.code != 1 || !strings.HasPrefix(r.stdout, path+":1:23: lanes_config_error: core_inline_limit must be a whole number from 1 to 100") {
		t.Fatalf("check of a bad lanes.json: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
