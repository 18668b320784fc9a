package host

import (
	"strings"
	"testing"
	"unicode"
)

// FuzzCountTerms holds countTerms' ASCII fast path to the plain definition
// of unicode61 tokens: runs of letters and digits, lower-cased, where a
// token longer than 64 bytes counts but never matches.
func FuzzCountTerms(f *testing.F) {
	for _, s := range []string{"", "SQLite WAL-mode, busy_timeout=30000!", "Ünïcode ÉCOLE straße ſ K", "\xff\xfeabc\x80",
		strings.Repeat("a", 63) + "é" + "b", strings.Repeat("x", 70) + " wal", "日本語のテキスト wal2 WAL"} {
		f.Add(s, "wal")
	}
	f.Fuzz(func(t *testing.T, s, term string) {
		terms := []string{"wal", "sqlite", strings.ToLower(term)}
		index := map[string]int{}
		for i, x := range terms {
			if _, ok := index[x]; !ok {
				index[x] = i
			}
		}
		got := make([]int, len(terms))
		n := countTerms(s, index, got)
		want := make([]int, len(terms))
		words := strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		for _, w := range words {
			w = strings.Map(unicode.ToLower, w)
			if i, ok := index[w]; ok && len(w) <= 64 {
				want[i]++
			}
		}
		if n != len(words) {
			t.Fatalf("%q: %d tokens, want %d", s, n, len(words))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%q: term %q counted %d, want %d", s, terms[i], got[i], want[i])
			}
		}
	})
}
