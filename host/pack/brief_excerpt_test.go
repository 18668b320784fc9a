package pack

import (
	"strings"
	"testing"
)

// FuzzOneLinePrefix: the prefix excerpt folds equals the same prefix of
// the whole text folded, whatever the text and its encoding.
func FuzzOneLinePrefix(f *testing.F) {
	for _, s := range []string{"", "a b", "  héllo \n\t wörld  ", "\xff\xfe abc", strings.Repeat("word ", 100)} {
		f.Add(s, 5)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 || n > 1000 {
			return
		}
		want := []rune(oneLine(s))
		got := oneLinePrefix(s, n)
		if len(want) > n {
			want = want[:n]
		}
		if string([]rune(got)) != string(want) {
			t.Errorf("oneLinePrefix(%q, %d) = %q, want %q", s, n, got, string(want))
		}
	})
}
