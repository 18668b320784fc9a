package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palacehq/palace/plugins/plugintest"
)

func TestPluginInspect(t *testing.T) {
	e := newEnv(t)
	gate := plugintest.Path(t, "gate")

	r := e.run("plugin", "inspect", gate)
	if r.code != 0 {
		t.Fatalf("gate-go: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"abi      extism\n", "points   gate\n", "         extism:host/env.input_length\n", "verdict  would load\n", "plugin   " + gate + "\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("text report lacks %q:\n%s", want, r.stdout)
		}
	}

	var rep struct {
		ABI            string   `json:"abi"`
		Size           int      `json:"size"`
		DecisionPoints []string `json:"decision_points"`
		Exports        []string `json:"exports"`
		WouldLoad      bool     `json:"would_load"`
		Verdict        string   `json:"verdict"`
		Problems       []string `json:"problems"`
	}
	if err := json.Unmarshal([]byte(e.ok("plugin", "inspect", gate, "--format", "json")), &rep); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(gate)
	if rep.ABI != "extism" || rep.Size != int(fi.Size()) || !rep.WouldLoad || rep.Verdict != "would load" ||
		len(rep.DecisionPoints) != 1 || rep.DecisionPoints[0] != "gate" || len(rep.Problems) != 0 {
		t.Errorf("json report: %+v", rep)
	}

	evil := e.run("plugin", "inspect", plugintest.Path(t, "evil"), "--format", "json")
	if evil.code != 1 || !strings.Contains(evil.stdout, `"would_load": false`) || !strings.Contains(evil.stdout, "only extism:host/env and wasi_snapshot_preview1 are allowed") {
		t.Errorf("evil: exit %d\n%s%s", evil.code, evil.stdout, evil.stderr)
	}

	notWasm := filepath.Join(e.dir, "notes.wasm")
	if err := os.WriteFile(notWasm, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := e.run("plugin", "inspect", notWasm); r.code != 1 || !strings.Contains(r.stdout, "verdict  would not load\nproblem  not a valid WebAssembly module") {
		t.Errorf("not wasm: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	for _, bad := range [][]string{{"plugin", "inspect", filepath.Join(e.dir, "missing.wasm")}, {"plugin", "inspect", e.dir}, {"plugin", "inspect"}} {
		if r := e.run(bad...); r.code != 2 || r.stdout != "" {
			t.Errorf("%v: exit %d\n%s%s", bad, r.code, r.stdout, r.stderr)
		}
	}
}

// A team's gate.wasm dropped into .palace/policies serves `palace gate`
// through the real binary: engine wasm in the decision and in `palace
// policy list`, a disk cache under $PALACE_HOME/cache/wazero after the
// first process, the module named when it fails, the default back once it
// is deleted.
func TestPluginServesTheGate(t *testing.T) {
	e := newEnv(t)
	s := e.record("store.Begin retries on SQLITE_BUSY", "--field", "storage")
	v := e.record("verified: the retry loop ran 3 times under load", "--field", "storage")
	id := e.distill("Wrap multi-row writes in store.Tx", "qi", "--field", "storage", "--supporting", s, "--verification", v)
	looping := e.distill("loop", "qi", "--field", "storage", "--supporting", s, "--verification", v)

	path := e.writeRepoPolicy("gate.wasm", plugintest.Guest(t, "gate"))
	var res struct {
		Allow   bool     `json:"allow"`
		Reasons []string `json:"reasons"`
		Policy  struct {
			Engine, Source string
		} `json:"policy"`
	}
	// The module is not committed: the gate must be told a local policy may decide.
	if err := json.Unmarshal([]byte(e.ok("gate", id, "--format", "json", "--allow-local-policy")), &res); err != nil {
		t.Fatal(err)
	}
	if !res.Allow || res.Policy.Engine != "wasm" || res.Policy.Source != "repo" || len(res.Reasons) != 1 || res.Reasons[0] != "qi → promoted: all thresholds met" {
		t.Fatalf("gate through gate-go: %+v", res)
	}
	seals, _ := filepath.Glob(filepath.Join(e.home, "cache", "wazero", "*", "*", "SEAL"))
	if len(seals) != 1 {
		t.Errorf("disk cache entries after the first process: %v", seals)
	}

	list := e.jsonOf("policy", "list")
	gate := list["points"].([]any)[0].(map[string]any)
	if gate["engine"] != "wasm" || gate["source"] != "repo" || gate["files"].([]any)[0] != path {
		t.Fatalf("policy list: %v", gate)
	}

	// The policy guest loops on a card whose statement is "loop": the gate
	// fails closed and names the module.
	e.writeRepoPolicy("gate.wasm", plugintest.Guest(t, "policy"))
	r := e.run("gate", looping)
	if r.code != 1 || !strings.Contains(r.stdout, "policy palace.gate ("+path+") failed, denying") || !strings.Contains(r.stdout, "deadline") {
		t.Fatalf("looping module: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(e.ok("gate", id, "--format", "json")), &res); err != nil {
		t.Fatal(err)
	}
	if res.Policy.Engine != "go" || res.Policy.Source != "embedded" {
		t.Fatalf("after deleting the module: %+v", res)
	}
}
