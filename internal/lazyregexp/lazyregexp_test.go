package lazyregexp_test

import (
	"testing"

	"github.com/palacehq/palace/internal/lazyregexp"
)

func TestCompiledOnFirstUse(t *testing.T) {
	bad := lazyregexp.New(`(unclosed`) // no panic yet: nothing is compiled
	if bad.String() != `(unclosed` {
		t.Fatalf("String = %q", bad.String())
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("an invalid pattern did not panic on first use")
			}
		}()
		bad.MatchString("x")
	}()

	re := lazyregexp.New(`^kc_([0-9a-z]{1,64})$`)
	if !re.MatchString("kc_abc") || re.MatchString("kc_ABC") || !re.Match([]byte("kc_1")) {
		t.Error("MatchString/Match disagree with the pattern")
	}
	if got := re.FindStringSubmatch("kc_abc"); len(got) != 2 || got[1] != "abc" {
		t.Errorf("FindStringSubmatch = %q", got)
	}
	if got := re.ReplaceAllString("kc_abc", "<$1>"); got != "<abc>" {
		t.Errorf("ReplaceAllString = %q", got)
	}
	first := re.Regexp()
	if second := re.Regexp(); first != second {
		t.Error("compiled twice")
	}
}
