package plugins

import (
	"strings"
	"testing"
)

// FuzzParseWasm: parseWasm reads untrusted bytes (any .wasm dropped in a
// policies folder, `palace plugin inspect` on anything), so it must never
// panic or hang, whatever the input.
func FuzzParseWasm(f *testing.F) {
	f.Add([]byte("\x00asm\x01\x00\x00\x00"))
	// type ()->i32; import env.f; function; export gate; code
	f.Add([]byte("\x00asm\x01\x00\x00\x00" +
		"\x01\x05\x01\x60\x00\x01\x7f" +
		"\x02\x09\x01\x03env\x01f\x00\x00" +
		"\x03\x02\x01\x00" +
		"\x07\x08\x01\x04gate\x00\x01" +
		"\x0a\x06\x01\x04\x00\x41\x00\x0b"))
	// memory, table, global and tag imports
	f.Add([]byte("\x00asm\x01\x00\x00\x00" +
		"\x02\x20\x04" +
		"\x01a\x01m\x02\x01\x01\x02" +
		"\x01a\x01t\x01\x70\x00\x01" +
		"\x01a\x01g\x03\x7f\x00" +
		"\x01a\x02tg\x04\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseWasm(b)
		if err != nil {
			return
		}
		points, _ := pointsAndProblems(m)
		for _, p := range points {
			if !strings.Contains("gate scope lanes mailbox", p) {
				t.Fatalf("unknown point %q", p)
			}
		}
		_ = Inspect("f.wasm", b).String()
	})
}

func TestParseWasmImportKinds(t *testing.T) {
	b := []byte("\x00asm\x01\x00\x00\x00" +
		"\x02\x20\x04" +
		"\x01a\x01m\x02\x01\x01\x02" + // memory, min 1 max 2
		"\x01a\x01t\x01\x70\x00\x01" + // table of funcref, min 1
		"\x01a\x01g\x03\x7f\x00" + // immutable i32 global
		"\x01a\x02tg\x04\x00\x00") // tag of type 0
	m, err := parseWasm(b)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, imp := range m.imports {
		got = append(got, imp.module+"."+imp.name+":"+imp.kind.String())
	}
	if want := "a.m:memory a.t:table a.g:global a.tg:tag"; strings.Join(got, " ") != want {
		t.Errorf("imports %q, want %s", got, want)
	}
}

func TestParseWasmRejects(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", "not a WebAssembly binary (missing \\0asm magic)"},
		{"section past end", "\x00asm\x01\x00\x00\x00\x02\x10\x00", "section 2 at offset 8: size 16: unexpected end of data"},
		{"overlong LEB128", "\x00asm\x01\x00\x00\x00\x02\xff\xff\xff\xff\xff\xff\x00", "section 2 at offset 8: integer representation too long"},
		{"name not UTF-8", "\x00asm\x01\x00\x00\x00\x02\x07\x01\x01\xff\x01f\x00\x00", "section 2 at offset 8: import 0: module name: name is not valid UTF-8"},
		{"unknown import kind", "\x00asm\x01\x00\x00\x00\x02\x07\x01\x01a\x01f\x09\x00", "section 2 at offset 8: import 0 (a.f): unknown import kind 0x09"},
		{"huge function count", "\x00asm\x01\x00\x00\x00\x03\x05\xff\xff\xff\xff\x0f", "section 3 at offset 8: unexpected end of data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseWasm([]byte(tt.in))
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
