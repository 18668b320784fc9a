package plugins

import (
	"strings"
	"testing"
)

// FuzzInspect: Inspect reads untrusted bytes (any .wasm dropped in a
// policies folder, `palace plugin inspect` on anything), so it must never
// panic or hang, and it names only known decision points.
func FuzzInspect(f *testing.F) {
	f.Add([]byte("\x00asm\x01\x00\x00\x00"))
	// type ()->i32; import env.f; function; export gate; code
	f.Add([]byte("\x00asm\x01\x00\x00\x00" +
		"\x01\x05\x01\x60\x00\x01\x7f" +
		"\x02\x09\x01\x03env\x01f\x00\x00" +
		"\x03\x02\x01\x00" +
		"\x07\x08\x01\x04gate\x00\x01" +
		"\x0a\x06\x01\x04\x00\x41\x00\x0b"))
	f.Add([]byte(importKinds))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := Inspect("f.wasm", b)
		for _, p := range r.DecisionPoints {
			if !strings.Contains("gate scope lanes mailbox research", p) {
				t.Fatalf("unknown point %q", p)
			}
		}
		_ = r.String()
	})
}

// importKinds imports a memory (min 1, max 2), a funcref table (min 1) and
// an immutable i32 global.
const importKinds = "\x00asm\x01\x00\x00\x00" +
	"\x02\x18\x03" +
	"\x01a\x01m\x02\x01\x01\x02" +
	"\x01a\x01t\x01\x70\x00\x01" +
	"\x01a\x01g\x03\x7f\x00"

func TestValidateRecordsImports(t *testing.T) {
	v, err := validateModule([]byte(importKinds), fuzzPages)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, imp := range v.mod.imports {
		got = append(got, imp.module+"."+imp.name+":"+imp.kind.String())
	}
	if want := "a.m:memory a.t:table a.g:global"; strings.Join(got, " ") != want {
		t.Errorf("imports %q, want %s", got, want)
	}
}

func TestValidateRejects(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", "not a WebAssembly binary (missing \\0asm magic)"},
		{"section past end", "\x00asm\x01\x00\x00\x00\x02\x10\x00", "import section at byte 8: declares 16 bytes but only 1 remain in the file"},
		{"overlong LEB128", "\x00asm\x01\x00\x00\x00\x02\xff\xff\xff\xff\xff\xff\x00", "import section at byte 8: size: integer representation too long"},
		{"name not UTF-8", "\x00asm\x01\x00\x00\x00\x02\x07\x01\x01\xff\x01f\x00\x00", "import section at byte 8: import 0: module name: name is not valid UTF-8"},
		{"unknown import kind", "\x00asm\x01\x00\x00\x00\x02\x07\x01\x01a\x01f\x09\x00", "import section at byte 8: import 0: import kind 0x09 is not supported"},
		{"tag import", "\x00asm\x01\x00\x00\x00\x02\x08\x01\x01a\x02tg\x04\x00\x00", "import section at byte 8: import 0: import kind 0x04 is not supported"},
		{"huge function count", "\x00asm\x01\x00\x00\x00\x03\x05\xff\xff\xff\xff\x0f", "function section at byte 8: declares 4294967295 functions; the limit is 1000000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := validateModule([]byte(tt.in), fuzzPages)
			if err == nil || err.Error() != tt.want {
				t.Errorf("error %v, want %s", err, tt.want)
			}
		})
	}
}

func TestSanitizeVersion(t *testing.T) {
	for in, want := range map[string]string{
		"":               "unversioned",
		"v1.4.0":         "v1.4.0",
		"v1.4.0+dirty":   "v1.4.0_dirty",
		"../../etc":      ".._.._etc",
		"..":             "unversioned",
		".":              "unversioned",
		"dev build é/ok": "dev_build____ok",
	} {
		if got := sanitizeVersion(in); got != want {
			t.Errorf("sanitizeVersion(%q) = %q, want %q", in, got, want)
		}
	}
}
