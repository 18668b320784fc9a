package plugins_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/palacehq/palace/plugins"
)

func ExampleInspect() {
	wasm := gateModule(returnsZero,
		wasmImport{module: "extism:host/env", name: "output_set", params: []valType{i64, i64}},
		wasmImport{module: "env", name: "evil_fn", results: []valType{i32}},
	)
	fmt.Print(plugins.Inspect("team.wasm", wasm))
	// Output:
	// plugin   team.wasm
	// size     92 bytes
	// sha256   6bbb34f68976e4f6d957b3076c2a3fa0f92741f25013f582e2d8038f43438604
	// abi      extism
	// points   gate
	// exports  gate
	// imports  env.evil_fn
	//          extism:host/env.output_set
	// verdict  would not load
	// problem  imports env.evil_fn: only extism:host/env and wasi_snapshot_preview1 are allowed
}

func TestInspectGoGuests(t *testing.T) {
	tests := []struct {
		guest     string
		points    []string
		wouldLoad bool
		verdict   string
	}{
		{"gate", []string{"gate"}, true, "would load"},
		{"lanes", []string{"lanes"}, true, "would load"},
		{"hostile", []string{"gate", "lanes"}, true, "would load"},
		{"evil", []string{"gate"}, false, "would not load: imports env.evil_fn: only extism:host/env and wasi_snapshot_preview1 are allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.guest, func(t *testing.T) {
			wasm := guest(t, tt.guest)
			r := plugins.Inspect(tt.guest+".wasm", wasm)
			if r.ABI != plugins.ABIExtism || r.Size != len(wasm) || r.WouldLoad != tt.wouldLoad || r.Verdict != tt.verdict {
				t.Errorf("abi %q size %d would_load %v verdict %q", r.ABI, r.Size, r.WouldLoad, r.Verdict)
			}
			if !reflect.DeepEqual(r.DecisionPoints, tt.points) {
				t.Errorf("decision points %q, want %q", r.DecisionPoints, tt.points)
			}
			// A Go reactor exports its runtime initialiser and its points,
			// and reaches the world only through the kernel and WASI.
			for _, want := range append([]string{"_initialize"}, tt.points...) {
				if !slices.Contains(r.Exports, want) {
					t.Errorf("exports %q lack %s", r.Exports, want)
				}
			}
			for _, want := range []string{"extism:host/env.output_set", "wasi_snapshot_preview1.fd_write"} {
				if !slices.Contains(r.Imports, want) {
					t.Errorf("imports %q lack %s", r.Imports, want)
				}
			}
			if !slices.IsSorted(r.Exports) || !slices.IsSorted(r.Imports) || len(slices.Compact(slices.Clone(r.Imports))) != len(r.Imports) {
				t.Error("exports or imports not sorted and unique")
			}
		})
	}
}

func TestInspectJSON(t *testing.T) {
	tests := []struct {
		name string
		wasm []byte
		want string
	}{
		{"plain wasm", wasmModule{funcs: []wasmFunc{{export: "add", params: []valType{i32, i32}, results: []valType{i32}, body: []byte{0x20, 0x00, 0x20, 0x01, 0x6a}}}}.bytes(),
			`{"name":"m.wasm","size":44,"sha256":"","abi":"plain wasm","decision_points":[],"exports":["add"],"imports":[],"would_load":false,` +
				`"verdict":"would not load: exports none of the decision points gate, scope, lanes, mailbox, research","problems":["exports none of the decision points gate, scope, lanes, mailbox, research"]}`},
		{"not wasm", []byte("MZ\x90\x00"),
			`{"name":"m.wasm","size":4,"sha256":"","abi":"unknown","decision_points":[],"exports":[],"imports":[],"would_load":false,` +
				`"verdict":"would not load: not a valid WebAssembly module: not a WebAssembly binary (missing \\0asm magic)","problems":["not a valid WebAssembly module: not a WebAssembly binary (missing \\0asm magic)"]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := plugins.Inspect("m.wasm", tt.wasm)
			if len(r.SHA256) != 64 {
				t.Errorf("sha256 %q", r.SHA256)
			}
			r.SHA256 = ""
			got, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("json\n got %s\nwant %s", got, tt.want)
			}
			if s := r.String(); !strings.Contains(s, "verdict  would not load\n") {
				t.Errorf("text rendering lacks the verdict:\n%s", s)
			}
		})
	}
}
