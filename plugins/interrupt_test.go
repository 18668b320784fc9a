package plugins_test

import (
	"context"
	"errors"
	"testing"

	"github.com/palacehq/palace/plugins"
)

// schedYield is the WASI import palace's deadline checks call.
var schedYield = wasmImport{module: "wasi_snapshot_preview1", name: "sched_yield", results: []valType{i32}}

// loopForever is `loop br 0 end` followed by the i32 an export returns.
var loopForever = []byte{0x03, 0x40, 0x0c, 0x00, 0x0b, 0x41, 0x00}

// Every guest that loops forever is stopped at the deadline, whichever of
// the two ways stops it: palace's checks in a module that can be
// rewritten, wazero closing one that cannot. In both cases the module then
// serves its next call.
func TestDeadlineStopsLoops(t *testing.T) {
	tests := []struct {
		name          string
		wasm          []byte
		input         string
		interruptible bool
	}{
		{"go guest, rewritten", guest(t, "hostile"), `{"do":"loop"}`, true},
		{"hand-written loop, rewritten", gateModule(loopForever, schedYield), `{}`, true},
		{"no sched_yield import, closed by wazero", gateModule(loopForever), `{}`, false},
		// Function entries count too: 2^60 calls and not one loop.
		{"recursion without loops, rewritten", wasmModule{
			imports: []wasmImport{schedYield},
			funcs: []wasmFunc{
				{export: "gate", results: []valType{i32}, body: []byte{0x41, 60, 0x10, 2, 0x41, 0x00}},
				{params: []valType{i32}, body: []byte{
					0x20, 0x00, 0x45, 0x04, 0x40, 0x0f, 0x0b, // if n == 0: return
					0x20, 0x00, 0x41, 0x01, 0x6b, 0x10, 2, // rec(n-1)
					0x20, 0x00, 0x41, 0x01, 0x6b, 0x10, 2, // rec(n-1)
				}},
			},
		}.bytes(), `{}`, true},
		// The loop counter is a new local after the parameters and
		// locals; a wrong index would fail validation on a type.
		{"loop in a function with parameters and locals, rewritten", wasmModule{
			imports: []wasmImport{schedYield},
			funcs: []wasmFunc{
				{export: "gate", results: []valType{i32}, body: []byte{0x41, 0x07, 0x42, 0x09, 0x10, 2, 0x41, 0x00}},
				{params: []valType{i32, i64}, locals: []valType{i64, 0x7c}, body: []byte{
					0x03, 0x40, // loop
					0x20, 0x01, 0x20, 0x02, 0x7c, 0x21, 0x02, // l2 += p1 (i64)
					0x20, 0x03, 0x44, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0xa0, 0x21, 0x03, // l3 += 1.0 (f64)
					0x20, 0x00, 0x0d, 0x00, // br_if 0 while p0 != 0
					0x0b,
				}},
			},
		}.bytes(), `{}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newRuntime(t, plugins.Config{}.WithCacheDir(sharedCache()).WithVersion("test").WithPoolSize(1))
			m, err := rt.Load(context.Background(), "loop.wasm", tt.wasm)
			if err != nil {
				t.Fatal(err)
			}
			if got := plugins.Interruptible(m); got != tt.interruptible {
				t.Fatalf("rewritten for palace's checks: got %v, want %v", got, tt.interruptible)
			}
			for range 2 { // the second call runs on a fresh instance
				_, err = m.Call(context.Background(), "gate", []byte(tt.input))
				if !errors.Is(err, plugins.ErrDeadline) {
					t.Fatalf("got %v, want ErrDeadline", err)
				}
			}
			// A cancelled caller stops the guest too, and is told so.
			ctx, cancel := context.WithCancel(context.Background())
			go cancel()
			if _, err := m.Call(ctx, "gate", []byte(tt.input)); !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled call: got %v", err)
			}
		})
	}
}
