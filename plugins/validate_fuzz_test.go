package plugins

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
)

// fuzzPages is the memory cap of the fuzz targets: small, so a module
// declaring a large memory is refused rather than allocated.
const fuzzPages = 16

// hostileSeeds adds the modules of testdata/hostile to f's seed corpus.
func hostileSeeds(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "hostile", "*.hex"))
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		var digits strings.Builder
		sc := bufio.NewScanner(bytes.NewReader(raw))
		for sc.Scan() {
			if line := sc.Text(); !strings.HasPrefix(line, "#") {
				digits.WriteString(strings.TrimSpace(line))
			}
		}
		b, err := hex.DecodeString(digits.String())
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// yieldingGate is a small module the instrumenter rewrites: it imports
// sched_yield, has a global, a table with an element segment, a loop, data
// and a name section.
var yieldingGate = mustHex("0061736d01000000010a026000017f60017f017f02260116776173695f736e61" +
	"7073686f745f70726576696577310b73636865645f7969656c64000003030200" +
	"0104040170000205030100010606017f0141000b070801046761746500010908" +
	"010041000b0201020a1f02040041000b1801017f02400340200041016b220045" +
	"0d010c000b0b20000b0b08010041000b0268690009046e616d6500020167")

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// FuzzValidate: validate never panics, and a module it accepts is one
// wazero decodes and compiles without allocating beyond what the bytes
// justify (the fuzzer would die of it), failing at most with an error.
func FuzzValidate(f *testing.F) {
	hostileSeeds(f)
	f.Add(yieldingGate)
	f.Add([]byte("\x00asm\x01\x00\x00\x00"))
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter().WithMemoryLimitPages(fuzzPages))
	defer rt.Close(ctx)
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := validateModule(b, fuzzPages)
		if err != nil {
			return
		}
		if n := uint32(len(v.mod.funcTypes)); n != v.funcs {
			t.Fatalf("validate read %d function types for %d functions", n, v.funcs)
		}
		func() {
			defer func() { _ = recover() }() // a wazero panic is wazero's bug, not a crash of palace's making
			if c, err := rt.CompileModule(ctx, capTables(b)); err == nil {
				c.Close(ctx)
			}
		}()
	})
}

// FuzzInstrument: the rewrites never panic, and what they produce from a
// valid module is still a valid module with the same imports and exports.
func FuzzInstrument(f *testing.F) {
	hostileSeeds(f)
	f.Add(yieldingGate)
	f.Fuzz(func(t *testing.T, b []byte) {
		if validate(b, fuzzPages) != nil {
			return
		}
		capped := capTables(b)
		if err := validate(capped, fuzzPages); err != nil {
			t.Fatalf("capTables broke a valid module: %v", err)
		}
		out, err := instrument(capped)
		if err != nil {
			return
		}
		if err := validate(out, fuzzPages); err != nil {
			t.Fatalf("instrument broke a valid module: %v", err)
		}
		before, err1 := validateModule(capped, fuzzPages)
		after, err2 := validateModule(out, fuzzPages)
		if err1 != nil || err2 != nil {
			t.Fatalf("validate: %v / %v", err1, err2)
		}
		if len(before.mod.imports) != len(after.mod.imports) || len(before.mod.exports) != len(after.mod.exports) {
			t.Fatalf("instrument changed imports or exports")
		}
	})
}

// TestYieldingGateSeed keeps the hand-made seed honest: it validates, is
// rewritten and still validates.
func TestYieldingGateSeed(t *testing.T) {
	if err := validate(yieldingGate, fuzzPages); err != nil {
		t.Fatal(err)
	}
	out, err := instrument(capTables(yieldingGate))
	if err != nil {
		t.Fatal(err)
	}
	if err := validate(out, fuzzPages); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	if _, err := rt.CompileModule(ctx, out); err != nil {
		t.Fatal(err)
	}
}
