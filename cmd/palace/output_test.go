package main

import "testing"

func TestEscapeControls(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"plain text, ünïcode 世界 and emoji 🙂", "plain text, ünïcode 世界 and emoji 🙂"},
		{"lines\nand\ttabs stay", "lines\nand\ttabs stay"},
		{"title\x1b]0;pwned\x07", `title\x1b]0;pwned\x07`},
		{"clear\x1b[2J\rback", `clear\x1b[2J\x0dback`},
		{"nul\x00 del\x7f", `nul\x00 del\x7f`},
		{"c1 csi \u009b31m", `c1 csi \u009b31m`},
		{"bidi \u202eevil\u202c \u2066iso\u2069", `bidi \u202eevil\u202c \u2066iso\u2069`},
		{"zero\u200bwidth\u200d join \ufeffbom \u00adsoft", `zero\u200bwidth\u200d join \ufeffbom \u00adsoft`},
		{"line\u2028sep", `line\u2028sep`},
		{"bad \xff utf-8", `bad \xff utf-8`},
		{"", ""},
	} {
		if got := escapeControls(tt.in); got != tt.want {
			t.Errorf("escapeControls(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got := escapeControls(escapeControls(tt.in)); got != escapeControls(tt.in) {
			t.Errorf("escapeControls is not idempotent on %q: %q", tt.in, got)
		}
	}
}

func TestTruncateEscapes(t *testing.T) {
	if got := truncate("a\x1b[8mhidden", 60); got != `a\x1b[8mhidden` {
		t.Errorf("truncate = %q", got)
	}
	if got := (painter{on: true}).dim("x\x1b[0m"); got != "\x1b[2m"+`x\x1b[0m`+"\x1b[0m" {
		t.Errorf("paint = %q", got)
	}
}
