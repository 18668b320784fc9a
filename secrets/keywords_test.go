package secrets

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// The two-half walk of a long text reports the same occurrences, in the
// same order, as one walk from the start, also for occurrences at the split,
// at either end and in a line longer than the rest of the text.
func TestKeywordsTwoHalvesMatchOneWalk(t *testing.T) {
	build()
	var b strings.Builder
	b.WriteString("token")
	for i := range 400 {
		fmt.Fprintf(&b, "line %d: the api_key and the PASSWORD of ghp_ sk- AKIA hooks.slack.com/ eyJ\n", i)
		if i == 200 {
			b.WriteString(strings.Repeat("x", 9000) + "secret\n")
		}
	}
	b.WriteString("password")
	for _, text := range []string{b.String(), b.String()[:5000], "no newline " + strings.Repeat("token ", 2000), "\n" + b.String()} {
		type occ struct{ w, start int }
		var one, two []occ
		keywords.walk([]byte(text), 0, 0, func(w, s int) { one = append(one, occ{w, s}) })
		keywords.each([]byte(text), func(w, s int) { two = append(two, occ{w, s}) })
		if len(one) < 10 || !reflect.DeepEqual(one, two) {
			t.Fatalf("text of %d bytes: one walk %d occurrences, two halves %d (or too few to test)", len(text), len(one), len(two))
		}
		for _, o := range one {
			if !strings.EqualFold(text[o.start:o.start+len(keywords.words[o.w])], keywords.words[o.w]) {
				t.Fatalf("occurrence %q at %d is not the keyword %q", text[o.start:o.start+len(keywords.words[o.w])], o.start, keywords.words[o.w])
			}
		}
	}
}
