package plugins_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/palacehq/palace/plugins"
)

// hostileModule is one module of testdata/hostile: a binary crafted to
// crash, exhaust or hang a host that loads it.
type hostileModule struct {
	name, desc string
	want       string // part of the refusal; "" when any refusal will do
	wasm       []byte
}

// hostileModules reads testdata/hostile/*.hex: "# " comment lines (the
// first says what the module does, "# want: " what its refusal must say),
// then the module's bytes in hex.
func hostileModules(tb testing.TB) []hostileModule {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "hostile", "*.hex"))
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no hostile modules: %v", err)
	}
	var mods []hostileModule
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		m := hostileModule{name: strings.TrimSuffix(filepath.Base(p), ".hex")}
		var digits strings.Builder
		sc := bufio.NewScanner(bytes.NewReader(raw))
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			switch {
			case strings.HasPrefix(line, "# want:"):
				m.want = strings.TrimSpace(strings.TrimPrefix(line, "# want:"))
			case strings.HasPrefix(line, "#"):
				if m.desc == "" {
					m.desc = strings.TrimSpace(strings.TrimPrefix(line, "#"))
				}
			default:
				digits.WriteString(line)
			}
		}
		if m.wasm, err = hex.DecodeString(digits.String()); err != nil {
			tb.Fatalf("%s: %v", p, err)
		}
		mods = append(mods, m)
	}
	return mods
}

// hostileLoadBound is how long a Load of a hostile module may take, with
// room for a machine busy with other tests; a Load that hangs fails the test
// here instead of timing out the whole run. Most are refused in
// microseconds by the walk or stopped at the 100 ms deadline; a start
// function that could recurse without looping (which wazero would stop only
// at its call stack ceiling, seconds later) is refused by the walk.
const hostileLoadBound = 5 * time.Second

// TestHostileModulesRefused loads every module of the corpus into a runtime
// with the default limits: each must be refused, by palace's own checks or
// at instantiation, with a reason naming what is wrong, and soon. The test
// process surviving is the other half of the assertion: several of these
// modules made wazero allocate gigabytes, which the Go runtime cannot
// recover from.
func TestHostileModulesRefused(t *testing.T) {
	mods := hostileModules(t)
	if len(mods) < 20 {
		t.Fatalf("%d hostile modules, want at least 20", len(mods))
	}
	rt := newRuntime(t, plugins.Config{}.WithCacheDir(t.TempDir()))
	for _, m := range mods {
		t.Run(m.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() {
				mod, err := rt.Load(context.Background(), m.name+".wasm", m.wasm)
				if err == nil {
					mod.Close(context.Background())
				}
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(hostileLoadBound):
				t.Fatalf("%s (%s): Load still running after %v", m.name, m.desc, hostileLoadBound)
			}
			if err == nil {
				t.Fatalf("%s (%s): loaded", m.name, m.desc)
			}
			if !strings.Contains(err.Error(), m.name+".wasm") {
				t.Errorf("error does not name the module: %v", err)
			}
			if m.want != "" && !strings.Contains(err.Error(), m.want) {
				t.Errorf("%s (%s): error %q does not say %q", m.name, m.desc, err, m.want)
			}
			// What Load refuses before compiling, Inspect refuses too, with
			// the same words.
			if errors.Is(err, plugins.ErrRefused) {
				rep := plugins.Inspect(m.name+".wasm", m.wasm)
				if rep.WouldLoad {
					t.Errorf("Inspect says %q for a module Load refuses: %v", rep.Verdict, err)
				} else if !strings.Contains(err.Error(), rep.Problems[0]) {
					t.Errorf("Inspect's problem %q is not Load's error %q", rep.Problems[0], err)
				}
			}
		})
	}
}

// TestElementBombNamed pins the message for the 44-byte module that used to
// take every palace process down: the section and the count are named.
func TestElementBombNamed(t *testing.T) {
	var bomb []byte
	for _, m := range hostileModules(t) {
		if m.name == "element-bomb" {
			bomb = m.wasm
		}
	}
	rt := newRuntime(t, plugins.Config{})
	_, err := rt.Load(context.Background(), "gate.wasm", bomb)
	if !errors.Is(err, plugins.ErrRefused) {
		t.Fatalf("got %v, want ErrRefused", err)
	}
	mustContain(t, err, "load plugin gate.wasm: not a valid WebAssembly module: element section at byte 29: declares 1724750646 element segments; the limit is 100000")
	rep := plugins.Inspect("gate.wasm", bomb)
	if rep.WouldLoad || !strings.Contains(rep.Verdict, "element section") {
		t.Fatalf("Inspect verdict %q", rep.Verdict)
	}
}

// TestLoopingStartStopped: the start function runs when an instance is
// created, so it gets the call deadline; Load fails with ErrDeadline and
// the runtime keeps loading other modules.
func TestLoopingStartStopped(t *testing.T) {
	var loop []byte
	for _, m := range hostileModules(t) {
		if m.name == "looping-start" {
			loop = m.wasm
		}
	}
	rt := newRuntime(t, plugins.Config{}.WithDeadline(50*time.Millisecond))
	_, err := rt.Load(context.Background(), "gate.wasm", loop)
	if !errors.Is(err, plugins.ErrDeadline) {
		t.Fatalf("got %v, want ErrDeadline", err)
	}
	mustContain(t, err, "gate.wasm", "start function")
	m, err := rt.Load(context.Background(), "ok.wasm", gateModule(returnsZero))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := m.Call(context.Background(), "gate", []byte("{}")); err == nil {
		t.Fatalf("a module that writes no output answered %q", out)
	}
}

// TestCompileBudget: a module whose compilation outlasts the budget is
// refused with the budget named, and the runtime keeps loading others.
func TestCompileBudget(t *testing.T) {
	restore := plugins.SetCompileBudget(time.Nanosecond)
	rt := newRuntime(t, plugins.Config{})
	funcs := make([]wasmFunc, 8)
	for i := range funcs {
		funcs[i] = wasmFunc{results: []valType{i32}, body: returnsZero}
	}
	funcs[0].export = "gate"
	_, err := rt.Load(context.Background(), "slow.wasm", wasmModule{funcs: funcs}.bytes())
	restore()
	mustContain(t, err, "load plugin slow.wasm: compile: still compiling after 1ns, stopped")
	if _, err := rt.Load(context.Background(), "ok.wasm", gateModule(returnsZero)); err != nil {
		t.Fatal(err)
	}
}
