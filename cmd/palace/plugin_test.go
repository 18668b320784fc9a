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
