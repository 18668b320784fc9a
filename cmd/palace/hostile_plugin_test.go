package main

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Two modules a cloned repository can carry in .palace/policies/gate.wasm.
// The first declares ~1.7 G element segments in five bytes, which wazero
// v1.12.0 allocated before reading one (a fatal out-of-memory in every
// palace process that loaded policies); the second has a start function
// that never returns (every command hung). plugins/testdata/hostile holds
// them and many more.
var hostileGateModules = []struct {
	name, hex, reason string
}{
	{"element bomb", "0061736d010000000105016000017f03020100070801046761746500000905b6b6b6b6060a0601040041000b",
		"element section at byte 29: declares 1724750646 element segments; the limit is 100000"},
	{"looping start", "0061736d010000000108026000017f6000000303020001070801046761746500000801010a0e02040041000b070003400c000b0b",
		"gate.wasm: instantiate: plugin deadline exceeded: the start function was still running after"},
}

// hostileExtra is how much longer than in a clean checkout a command may
// take with a hostile module in place: the module is refused by palace's
// checks at once, or stopped at the 100 ms deadline. Measured against the
// same command without the module, so a slow machine does not fail it.
const hostileExtra = 2 * time.Second

// TestHostileGateWasm drops each module into <repo>/.palace/policies/ and
// runs every command that loads policies: each ends in time, with its
// documented exit code and the refusal named. gate and mailbox check fail
// closed; context and brief answer from the embedded defaults and say so.
func TestHostileGateWasm(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ev := e.evidence(2, "general")
	card := e.distill("Hostile modules are refused", "qi", "--supporting", ev[0], "--verification", ev[1])
	e.writeFile(".palace/inbox.jsonl", []byte(letterLine("a field report", "")+"\n"))

	cmds := []struct {
		args []string
		code int
		out  func(r result) string // where the refusal is reported
	}{
		{[]string{"gate", card}, 1, stdoutAndErr},
		{[]string{"context", "--include-candidates"}, 0, stdoutAndErr},
		{[]string{"brief", "--include-candidates"}, 0, stdoutAndErr},
		{[]string{"doctor"}, 1, stdoutAndErr},
		{[]string{"policy", "list"}, 1, stdoutAndErr},
		{[]string{"mailbox", "check"}, 1, stdoutAndErr},
	}
	baseline := map[string]time.Duration{}
	for _, c := range cmds {
		start := time.Now()
		e.run(c.args...)
		baseline[strings.Join(c.args, " ")] = time.Since(start)
	}

	wasmPath := filepath.Join(e.dir, ".palace", "policies", "gate.wasm")
	for _, m := range hostileGateModules {
		b, err := hex.DecodeString(m.hex)
		if err != nil {
			t.Fatal(err)
		}
		e.writeFile(".palace/policies/gate.wasm", b)
		for _, c := range cmds {
			name := strings.Join(c.args, " ")
			t.Run(m.name+"/"+name, func(t *testing.T) {
				start := time.Now()
				r := e.run(c.args...)
				took := time.Since(start)
				if took > baseline[name]+hostileExtra {
					t.Errorf("took %v, %v without the module", took, baseline[name])
				}
				if r.code != c.code {
					t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, c.code, r.stdout, r.stderr)
				}
				if got := c.out(r); !strings.Contains(got, m.reason) {
					t.Errorf("output does not name the refusal %q:\n%s", m.reason, got)
				}
			})
		}
		// plugin inspect gives Load's verdict for what it can see without
		// running the module: the element bomb would not load.
		r := e.run("plugin", "inspect", wasmPath)
		if strings.Contains(m.reason, "element section") {
			wantCode(t, r, 1)
			if !strings.Contains(r.stdout, "would not load") || !strings.Contains(r.stdout, m.reason) {
				t.Errorf("plugin inspect:\n%s", r.stdout)
			}
		}
	}
	if err := os.Remove(wasmPath); err != nil {
		t.Fatal(err)
	}
	e.ok("gate", card)
}

func stdoutAndErr(r result) string { return r.stdout + r.stderr }

// TestMCPHostileGateWasm: a running `palace mcp` keeps answering through a
// hostile module dropped into the repository. Next to the team's gate.rego
// it is refused and the team's gate keeps deciding; once gate.rego is
// deleted the set that held it is withdrawn rather than kept (the gate
// then denies, naming the module's refusal); removing the module restores
// the embedded default.
func TestMCPHostileGateWasm(t *testing.T) {
	for _, m := range hostileGateModules {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			seen, fixed := e.record("seen"), e.record("verified")
			card := e.distill("Run make lint before pushing", "qi", "--supporting", seen, "--verification", fixed)
			frozen := "package palace.gate\n\nimport rego.v1\n\ndecision := {\"allow\": false, \"reasons\": [\"team: frozen\"], \"missing\": {}}\n"
			e.writeFile(".palace/policies/gate.rego", []byte(frozen))
			cs := e.mcpSession(t, nil)
			gate := func() (bool, string) {
				res := mcpCall(t, cs, "palace_gate", map[string]any{"id": card})
				var g struct {
					Allow   bool
					Reasons []string
				}
				b, _ := json.Marshal(res.StructuredContent)
				if err := json.Unmarshal(b, &g); err != nil {
					t.Fatal(err)
				}
				return g.Allow, strings.Join(g.Reasons, "; ")
			}
			// until polls the running server, bounded: fsnotify and the
			// watcher's debounce make every change asynchronous.
			until := func(what string, ok func(allow bool, reasons string) bool) {
				t.Helper()
				deadline := time.Now().Add(15 * time.Second)
				for {
					allow, reasons := gate()
					if ok(allow, reasons) {
						return
					}
					if time.Now().After(deadline) {
						t.Fatalf("%s: the server still answers allow=%v, %q", what, allow, reasons)
					}
					time.Sleep(50 * time.Millisecond)
				}
			}
			until("team gate", func(allow bool, r string) bool { return !allow && strings.Contains(r, "team: frozen") })

			b, _ := hex.DecodeString(m.hex)
			wasmPath := e.writeFile(".palace/policies/gate.wasm", b)
			time.Sleep(time.Second) // the reload (refused) happens in here
			if allow, r := gate(); allow || !strings.Contains(r, "team: frozen") {
				t.Fatalf("with the module dropped in, the last good set stopped serving: allow=%v, %q", allow, r)
			}

			if err := os.Remove(filepath.Join(e.dir, ".palace", "policies", "gate.rego")); err != nil {
				t.Fatal(err)
			}
			until("gate.rego deleted", func(allow bool, r string) bool {
				return !allow && strings.Contains(r, "could not load") && strings.Contains(r, "gate.wasm")
			})

			if err := os.Remove(wasmPath); err != nil {
				t.Fatal(err)
			}
			until("module removed", func(allow bool, r string) bool { return allow })
		})
	}
}
