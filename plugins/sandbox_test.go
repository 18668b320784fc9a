package plugins_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/palacehq/palace/plugins"
)

func TestLoadRefusesBadModules(t *testing.T) {
	evil := wasmImport{module: "env", name: "evil_fn", results: []valType{i32}}
	tests := []struct {
		name string
		wasm []byte
		want string
	}{
		{"unknown namespace", gateModule(returnsZero, evil),
			"load plugin m.wasm: imports env.evil_fn: only extism:host/env and wasi_snapshot_preview1 are allowed"},
		{"extism host functions", gateModule(returnsZero, wasmImport{module: "extism:host/user", name: "fetch", params: []valType{i64}, results: []valType{i64}}),
			"load plugin m.wasm: imports extism:host/user.fetch: palace provides no host functions (extism:host/user); only extism:host/env and wasi_snapshot_preview1 are allowed"},
		{"unknown kernel function", gateModule(returnsZero, wasmImport{module: "extism:host/env", name: "spawn"}),
			"load plugin m.wasm: imports extism:host/env.spawn: no such function in the Extism kernel"},
		{"unknown WASI function", gateModule(returnsZero, wasmImport{module: "wasi_snapshot_preview1", name: "sock_open"}),
			"load plugin m.wasm: imports wasi_snapshot_preview1.sock_open: no such function in WASI preview 1"},
		{"memory import", gateModule(returnsZero, wasmImport{module: "extism:host/env", name: "memory", kind: 2}),
			"load plugin m.wasm: imports extism:host/env.memory: a memory import; only functions may be imported from extism:host/env"},
		{"several bad imports", gateModule(returnsZero, evil, wasmImport{module: "os", name: "exec"}),
			"load plugin m.wasm: imports env.evil_fn: only extism:host/env and wasi_snapshot_preview1 are allowed (and 1 more; see palace plugin inspect)"},
		{"no decision point", wasmModule{funcs: []wasmFunc{{export: "greet", results: []valType{i32}, body: returnsZero}}}.bytes(),
			"load plugin m.wasm: exports none of the decision points gate, scope, lanes, mailbox, research"},
		{"decision point with parameters", wasmModule{funcs: []wasmFunc{{export: "lanes", params: []valType{i32}, results: []valType{i32}, body: returnsZero}}}.bytes(),
			"load plugin m.wasm: exports lanes with signature (i32) -> (i32); a decision point takes no parameters and returns an i32 status (0 = ok)"},
		{"decision point that is not a function", wasmModule{memory: 1, extraExports: []struct {
			name  string
			kind  byte
			index int
		}{{"mailbox", 2, 0}}}.bytes(),
			"load plugin m.wasm: exports mailbox as a memory; a decision point must be a function"},
		{"not wasm", []byte("#!/bin/sh\nrm -rf /\n"),
			"load plugin m.wasm: not a valid WebAssembly module: not a WebAssembly binary (missing \\0asm magic)"},
		{"component", []byte("\x00asm\x0d\x00\x01\x00"),
			"load plugin m.wasm: not a valid WebAssembly module: unsupported WebAssembly binary version 0d 00 01 00 (want 01 00 00 00; components are not supported)"},
		{"truncated", gateModule(returnsZero)[:20],
			"load plugin m.wasm: not a valid WebAssembly module: function section at byte 18: declares 2 bytes but only 0 remain in the file"},
	}
	rt := newRuntime(t, testConfig())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := rt.Load(context.Background(), "m.wasm", tt.wasm)
			if err == nil {
				m.Close(context.Background())
				t.Fatal("loaded, want refused")
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("error\n got %s\nwant %s", got, tt.want)
			}
			if !errors.Is(err, plugins.ErrRefused) {
				t.Errorf("errors.Is(%v, ErrRefused) = false", err)
			}
			// Inspect gives the same verdict without loading.
			if r := plugins.Inspect("m.wasm", tt.wasm); r.WouldLoad || !strings.HasPrefix(tt.want, "load plugin m.wasm: "+r.Problems[0]) {
				t.Errorf("Inspect verdict %q, problems %q; want the Load error's", r.Verdict, r.Problems)
			}
		})
	}
}

// The same refusals for modules built by the Go toolchain with
// //go:wasmimport, the way a plugin author would write them.
func TestLoadRefusesGoGuestImports(t *testing.T) {
	rt := newRuntime(t, testConfig())
	for guestName, want := range map[string]string{
		"evil":     "load plugin evil.wasm: imports env.evil_fn: only extism:host/env and wasi_snapshot_preview1 are allowed",
		"userhost": "load plugin userhost.wasm: imports extism:host/user.fetch: palace provides no host functions (extism:host/user); only extism:host/env and wasi_snapshot_preview1 are allowed",
	} {
		t.Run(guestName, func(t *testing.T) {
			_, err := rt.Load(context.Background(), guestName+".wasm", guest(t, guestName))
			if err == nil || err.Error() != want {
				t.Fatalf("error\n got %v\nwant %s", err, want)
			}
		})
	}
}

// TestKernelImportsLink proves the kernel function list the sandbox accepts
// matches the Extism SDK: a module importing every one of them, with the
// SDK's signatures, loads (Load instantiates, which links every import).
func TestKernelImportsLink(t *testing.T) {
	p, r := []valType{i64}, []valType{i64}
	sigs := map[string][2][]valType{
		"alloc": {p, r}, "free": {p, nil}, "length": {p, r}, "length_unsafe": {p, r}, "memory_bytes": {nil, r},
		"load_u8": {p, {i32}}, "load_u64": {p, r}, "store_u8": {{i64, i32}, nil}, "store_u64": {{i64, i64}, nil},
		"input_length": {nil, r}, "input_offset": {nil, r}, "input_load_u8": {p, {i32}}, "input_load_u64": {p, r},
		"input_set": {{i64, i64}, nil}, "output_length": {nil, r}, "output_offset": {nil, r}, "output_set": {{i64, i64}, nil},
		"reset": {nil, nil}, "error_set": {p, nil}, "error_get": {nil, r},
		"config_get": {p, r}, "var_get": {p, r}, "var_set": {{i64, i64}, nil},
		"http_request": {{i64, i64}, r}, "http_status_code": {nil, {i32}}, "http_headers": {nil, r},
		"get_log_level": {nil, {i32}}, "log_trace": {p, nil}, "log_debug": {p, nil}, "log_info": {p, nil},
		"log_warn": {p, nil}, "log_error": {p, nil},
	}
	var imports []wasmImport
	for name, sig := range sigs {
		imports = append(imports, wasmImport{module: "extism:host/env", name: name, params: sig[0], results: sig[1]})
	}
	rt := newRuntime(t, testConfig())
	m, err := rt.Load(context.Background(), "kernel.wasm", gateModule(returnsZero, imports...))
	if err != nil {
		t.Fatal(err)
	}
	if got := plugins.Inspect("kernel.wasm", gateModule(returnsZero, imports...)).ABI; got != plugins.ABIExtism {
		t.Errorf("ABI = %q, want %q", got, plugins.ABIExtism)
	}
	// Returning 0 without output is an error, not an empty answer.
	_, err = m.Call(context.Background(), "gate", []byte(`{}`))
	mustContain(t, err, "call plugin kernel.wasm gate: returned status 0 but wrote no output")
}

// TestHostileGuest runs each misbehaviour of the hostile guest, then checks
// that the same Module still answers.
func TestHostileGuest(t *testing.T) {
	tests := []struct {
		do      string
		n       int
		wantErr []string // parts of the error; nil = the call must succeed
		target  error    // errors.Is target, if any
		check   func(t *testing.T, out []byte)
	}{
		{do: "file", check: func(t *testing.T, out []byte) {
			var res map[string]string
			if err := json.Unmarshal(out, &res); err != nil {
				t.Fatal(err)
			}
			if len(res) != 7 {
				t.Errorf("got %d results, want 7: %s", len(res), out)
			}
			for op, r := range res {
				if !strings.HasPrefix(r, "error: ") {
					t.Errorf("%s: %s, want an error", op, r)
				}
			}
		}},
		{do: "env", check: func(t *testing.T, out []byte) {
			var res struct {
				Environ []string `json:"environ"`
				Args    []string `json:"args"`
			}
			if err := json.Unmarshal(out, &res); err != nil {
				t.Fatal(err)
			}
			if len(res.Environ) != 0 || len(res.Args) != 0 {
				t.Errorf("guest sees environ %q args %q, want none", res.Environ, res.Args)
			}
		}},
		{do: "config", check: func(t *testing.T, out []byte) {
			if string(out) != `{"config":false}` {
				t.Errorf("output %s, want no config", out)
			}
		}},
		// proc_exit(0) after answering: the answer stands, and the dead
		// instance must not fail the next call.
		{do: "exit", check: func(t *testing.T, out []byte) {
			if string(out) != `{"do":"exit","n":0}` {
				t.Errorf("output %s", out)
			}
		}},
		{do: "http", wantErr: []string{"HTTP request to 'https://example.com/' is not allowed"}},
		{do: "var", wantErr: []string{"Vars are disabled by this host"}},
		// A Go guest prints the panic and then traps.
		{do: "panic", wantErr: []string{"call plugin hostile.wasm gate: wasm error: unreachable: stderr: panic: boom"}},
		{do: "seterror", wantErr: []string{"call plugin hostile.wasm gate: policy says no"}},
		{do: "status", n: 7, wantErr: []string{"call plugin hostile.wasm gate: returned status 7"}},
		{do: "silent", wantErr: []string{"returned status 0 but wrote no output"}},
		// The output is the JSON string "xxx…": n+2 bytes.
		{do: "big", n: 1<<20 - 2},
		{do: "big", n: 1<<20 - 1, target: plugins.ErrOutputTooLarge,
			wantErr: []string{"call plugin hostile.wasm gate: plugin output too large: wrote 1048577 bytes, the limit is 1048576"}},
		{do: "nonsense", wantErr: []string{"unknown behaviour nonsense"}},
	}
	// A pool of one instance makes "the next call gets a fresh instance"
	// observable: a reused broken instance would fail it.
	rt := newRuntime(t, testConfig().WithPoolSize(1))
	m := load(t, rt, "hostile")
	for _, tt := range tests {
		t.Run(tt.do, func(t *testing.T) {
			in, _ := json.Marshal(map[string]any{"do": tt.do, "n": tt.n})
			out, err := m.Call(context.Background(), "gate", in)
			switch {
			case tt.wantErr != nil:
				mustContain(t, err, tt.wantErr...)
				if tt.target != nil && !errors.Is(err, tt.target) {
					t.Errorf("errors.Is(%v, %v) = false", err, tt.target)
				}
			case err != nil:
				t.Fatal(err)
			case tt.check != nil:
				t.Logf("output: %s", out)
				tt.check(t, out)
			}
			assertServes(t, m)
		})
	}
}

// assertServes checks that m still answers an ordinary call.
func assertServes(t *testing.T, m *plugins.Module) {
	t.Helper()
	in := []byte(`{"do":"echo","n":42}`)
	out, err := m.Call(context.Background(), "gate", in)
	if err != nil {
		t.Fatalf("module stopped serving: %v", err)
	}
	if string(out) != string(in) {
		t.Fatalf("echo = %s, want %s", out, in)
	}
}

func TestTrap(t *testing.T) {
	rt := newRuntime(t, testConfig().WithPoolSize(1))
	m, err := rt.Load(context.Background(), "trap.wasm", gateModule([]byte{0x00})) // unreachable
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second call runs on a fresh instance
		_, err = m.Call(context.Background(), "gate", []byte(`{}`))
		mustContain(t, err, "call plugin trap.wasm gate: wasm error: unreachable")
	}
}

func TestDeadline(t *testing.T) {
	// Default deadline (100 ms), one instance: the looping instance must be
	// replaced for the next call to work.
	cfg := plugins.Config{}.WithCacheDir(sharedCache()).WithVersion("test").WithPoolSize(1)
	rt := newRuntime(t, cfg)
	m := load(t, rt, "hostile")

	start := time.Now()
	_, err := m.Call(context.Background(), "gate", []byte(`{"do":"loop"}`))
	elapsed := time.Since(start)
	if !errors.Is(err, plugins.ErrDeadline) {
		t.Fatalf("error %v, want ErrDeadline", err)
	}
	mustContain(t, err, "call plugin hostile.wasm gate: plugin deadline exceeded: still running after 100ms, stopped")
	if elapsed < plugins.DefaultDeadline || elapsed > 2*time.Second {
		t.Errorf("loop stopped after %v, want just over %v", elapsed, plugins.DefaultDeadline)
	}
	assertServes(t, m)

	// The caller's own, earlier deadline is reported as the caller's.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = m.Call(ctx, "gate", []byte(`{"do":"loop"}`))
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, plugins.ErrDeadline) {
		t.Fatalf("error %v, want the caller's context.DeadlineExceeded", err)
	}
	assertServes(t, m)
}

func TestMemoryCap(t *testing.T) {
	rt := newRuntime(t, testConfig().WithMemoryLimit(32<<20).WithPoolSize(1))
	m := load(t, rt, "hostile")
	_, err := m.Call(context.Background(), "gate", []byte(`{"do":"membomb"}`))
	mustContain(t, err, "call plugin hostile.wasm gate: wasm error: unreachable: stderr: runtime: out of memory: cannot allocate 1048576-byte block")
	if errors.Is(err, plugins.ErrDeadline) {
		t.Fatalf("the bomb ran into the deadline, not the memory cap: %v", err)
	}
	assertServes(t, m)

	// A module declaring more memory than the cap is refused before it
	// is compiled, by the runtime's cap rather than the default.
	big := wasmModule{memory: 600, funcs: []wasmFunc{{export: "gate", results: []valType{i32}, body: returnsZero}}}.bytes()
	_, err = rt.Load(context.Background(), "big.wasm", big)
	mustContain(t, err, "load plugin big.wasm: not a valid WebAssembly module: memory section at byte 22: memory of 600 pages (37 MiB) at start; the plugin memory limit is 32 MiB")
	if !errors.Is(err, plugins.ErrRefused) {
		t.Fatalf("got %v, want ErrRefused", err)
	}
}

func TestWASIOutputEnvRefused(t *testing.T) {
	t.Setenv("EXTISM_ENABLE_WASI_OUTPUT", "1")
	rt := newRuntime(t, testConfig())
	_, err := rt.Load(context.Background(), "m.wasm", gateModule(returnsZero))
	mustContain(t, err, "load plugin m.wasm: instantiate: EXTISM_ENABLE_WASI_OUTPUT is set, which would connect the plugin's stdout to palace's; unset it")
}
