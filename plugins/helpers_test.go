package plugins_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/palacehq/palace/plugins"
	"github.com/palacehq/palace/plugins/plugintest"
)

// Guests are real plugins built from Go sources by plugintest, once per
// source version and kept across runs; compiled modules are shared through
// one disk cache kept the same way, so each distinct module is compiled by
// wazero once per machine. Tests of the cache itself use their own
// directories.

// guest returns the bytes of the named guest (see plugintest.Guests).
func guest(tb testing.TB, name string) []byte {
	tb.Helper()
	return plugintest.Guest(tb, name)
}

// testConfig is the configuration most tests use: defaults, the shared disk
// cache, and a deadline long enough that a busy CI machine never turns a slow
// call into a flaky failure. Tests of the deadline itself use the default.
func testConfig() plugins.Config {
	return plugins.Config{}.
		WithCacheDir(sharedCache()).
		WithVersion("test").
		WithDeadline(5 * time.Second)
}

// sharedCache is the disk cache directory shared by the tests of this run.
func sharedCache() string { return plugintest.CacheDir() }

func newRuntime(tb testing.TB, cfg plugins.Config) *plugins.Runtime {
	tb.Helper()
	rt, err := plugins.NewRuntime(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := rt.Close(context.Background()); err != nil {
			tb.Errorf("close runtime: %v", err)
		}
	})
	return rt
}

func load(tb testing.TB, rt *plugins.Runtime, name string) *plugins.Module {
	tb.Helper()
	m, err := rt.Load(context.Background(), name+".wasm", guest(tb, name))
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// A tiny WebAssembly assembler for modules the Go toolchain cannot produce:
// forbidden imports of every kind, wrong signatures, a bare trap.

type valType = byte

const (
	i32 valType = 0x7f
	i64 valType = 0x7e
)

type wasmImport struct {
	module, name    string
	kind            byte // 0 function, 2 memory
	params, results []valType
}

type wasmFunc struct {
	export          string // "" = not exported
	params, results []valType
	locals          []valType // one declaration group each
	body            []byte    // instructions, without locals and the final end
}

type wasmModule struct {
	imports      []wasmImport
	funcs        []wasmFunc
	memory       int // minimum pages of a defined memory; 0 = none
	extraExports []struct {
		name  string
		kind  byte
		index int
	} // extra non-function exports
}

func uleb(v uint64) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}

func name(s string) []byte { return append(uleb(uint64(len(s))), s...) }

func vec(items [][]byte) []byte {
	out := uleb(uint64(len(items)))
	for _, it := range items {
		out = append(out, it...)
	}
	return out
}

func section(id byte, body []byte) []byte {
	return append(append([]byte{id}, uleb(uint64(len(body)))...), body...)
}

func functype(params, results []valType) []byte {
	b := []byte{0x60}
	b = append(b, uleb(uint64(len(params)))...)
	b = append(b, params...)
	b = append(b, uleb(uint64(len(results)))...)
	return append(b, results...)
}

func (m wasmModule) bytes() []byte {
	var types, imports, funcs, exports, code [][]byte
	nImportedFuncs := 0
	for _, imp := range m.imports {
		entry := append(name(imp.module), name(imp.name)...)
		entry = append(entry, imp.kind)
		switch imp.kind {
		case 0:
			entry = append(entry, uleb(uint64(len(types)))...)
			types = append(types, functype(imp.params, imp.results))
			nImportedFuncs++
		case 2:
			entry = append(entry, 0x00, 0x01) // limits: min 1, no max
		}
		imports = append(imports, entry)
	}
	for i, f := range m.funcs {
		funcs = append(funcs, uleb(uint64(len(types))))
		types = append(types, functype(f.params, f.results))
		if f.export != "" {
			exports = append(exports, append(append(name(f.export), 0x00), uleb(uint64(nImportedFuncs+i))...))
		}
		body := uleb(uint64(len(f.locals)))
		for _, t := range f.locals {
			body = append(body, 0x01, t)
		}
		body = append(body, f.body...)
		body = append(body, 0x0b)
		code = append(code, append(uleb(uint64(len(body))), body...))
	}
	for _, e := range m.extraExports {
		exports = append(exports, append(append(name(e.name), e.kind), uleb(uint64(e.index))...))
	}
	out := []byte("\x00asm\x01\x00\x00\x00")
	out = append(out, section(1, vec(types))...)
	out = append(out, section(2, vec(imports))...)
	out = append(out, section(3, vec(funcs))...)
	if m.memory > 0 {
		out = append(out, section(5, vec([][]byte{append([]byte{0x00}, uleb(uint64(m.memory))...)}))...)
	}
	out = append(out, section(7, vec(exports))...)
	out = append(out, section(10, vec(code))...)
	return out
}

// returnsZero is the body of an Extism-style export that does nothing.
var returnsZero = []byte{0x41, 0x00} // i32.const 0

// gateModule is a minimal module exporting gate () -> i32 with body, and the
// given imports.
func gateModule(body []byte, imports ...wasmImport) []byte {
	return wasmModule{
		imports: imports,
		funcs:   []wasmFunc{{export: "gate", results: []valType{i32}, body: body}},
	}.bytes()
}

// mustContain fails unless err's message contains every part.
func mustContain(tb testing.TB, err error, parts ...string) {
	tb.Helper()
	if err == nil {
		tb.Fatalf("got no error, want one containing %q", parts)
	}
	for _, p := range parts {
		if !bytes.Contains([]byte(err.Error()), []byte(p)) {
			tb.Fatalf("error %q does not contain %q", err, p)
		}
	}
}
