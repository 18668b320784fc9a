package cardfile

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// fastCases are scalars chosen to hit each of the YAML encoder's style
// decisions: words that read as booleans or null, numbers, timestamps,
// digests, indicators at the start, in the middle and at the end, quotes,
// spaces at the edges, and text the fast path leaves to the encoder (line
// breaks, tabs, non-ASCII).
var fastCases = []string{
	"", " ", "a", "abc", "kc_01hzzzzzzzzzzzzzzzzzzzzzzz", "store/**", "svc1/db.go#L12", "a #b", "a# b", "#a",
	"a: b", "a:b", "a:", ":a", ": a", "?a", "? a", "-a", "- a", "-", "--", "---", "--- a", "...", "a...", "a---",
	"a, b", "a,b", ",a", "[a]", "a[b]", "{a}", "a}", "&a", "*", "*a", "a*", "!a", "|a", ">a", "'a", "a'b", "\"a",
	"a\"b", "%a", "@a", "`a", "a\\b", " a", "a ", "a  b", "yes", "Yes", "YES", "y", "n", "no", "on", "off", "Off",
	"true", "True", "false", "null", "Null", "~", "~a", "<<", "<", ".", ".5", ".a", ".inf", ".NaN", "+.inf", "-.inf",
	"1", "12", "-1", "+1", "1.5", "1e3", "0x1f", "0o17", "0b101", "1_000", "1:20", "1a", "2026-11-20", "2026-11-20T10:00:00.000Z",
	"2026-13-45", "2026-13-45T10:00:00.000Z", "2026-11-20T25:00:00.000Z", "2026-1-2",
	"572bc6e7f77dc591b9287f5c1b48ee293993dd953c95aa518dd288e871f549aa",
	"0b2bc6e7f77dc591b9287f5c1b48ee293993dd953c95aa518dd288e871f549aa",
	"1234567890123456789012345678901234567890123456789012345678901234",
	"123456789012345678901234567890123456789012345678901234567890e123",
	"Service 5: defer tx.Rollback right after BeginTx", "sql\\.Open", "a\nb", "a\n", "\na", "a\tb", "道", "é",
	"Seen in service 1: handlers that open a transaction must close it on every return path, or the pool drains under load.",
	"it's", "'quoted'", "\"double\"", "a # not a comment", "a #comment", "x=1&y=2", "http://example.com/a?b=c#d",
}

// fastPieces build random scalars from the characters that matter.
var fastPieces = []string{"a", "Z", "0", "9", "e", "f", " ", ":", "#", ",", "-", ".", "?", "[", "]", "{", "}", "'", "\"",
	"\\", "*", "&", "!", "|", ">", "%", "@", "`", "~", "+", "_", "/", "=", "yes", "true", "null", "2026-11-20", "\t", "\n", "é"}

func randomScalar(r *rand.Rand) string {
	if r.IntN(40) == 0 {
		return fastCases[r.IntN(len(fastCases))]
	}
	var b strings.Builder
	for range r.IntN(6) {
		p := fastPieces[r.IntN(len(fastPieces))]
		if (p == "\t" || p == "\n" || p == "é") && r.IntN(20) != 0 {
			continue
		}
		b.WriteString(p)
	}
	return b.String()
}

func randomList(r *rand.Rand) []string {
	out := make([]string, r.IntN(4))
	for i := range out {
		out[i] = randomScalar(r)
	}
	return out
}

func randomCard(r *rand.Rand) Card {
	s := func() string { return randomScalar(r) }
	c := Card{ID: s(), Statement: s(), Tier: s(), Status: s(), Domain: s(), Field: s(),
		Scope:       Scope{Paths: randomList(r), Languages: randomList(r), Fields: randomList(r)},
		Triggers:    Triggers{Patterns: randomList(r), Intents: randomList(r), ToolNeeds: randomList(r)},
		Persistence: s(), RenderPref: s(), ReviewAfter: s(), ExpiresAt: s(), OriginCard: s(), CreatedBy: s(), CreatedAt: s(),
		Content: s()}
	if r.IntN(2) == 0 {
		c.LastEvent = &Event{Type: s(), At: s(), Actor: s(), Reviewer: Reviewer{Name: s(), Type: s()}, PolicyHash: s()}
	}
	for range r.IntN(3) {
		c.Citations = append(c.Citations, Citation{Evidence: s(), Role: s(), SourceRef: s(), SHA256: s(), Note: s()})
	}
	for range r.IntN(3) {
		c.Evidence = append(c.Evidence, Evidence{ID: s(), SHA256: s(), Domain: s(), Field: s(), Provenance: s(), SourceRef: s(),
			Tags: randomList(r), Actor: s(), ActorType: s(), CreatedAt: s(), Redacted: r.IntN(2) == 0, Content: s()})
	}
	return c
}

// TestEncodeFastMatchesYAML checks the fast writer against the YAML
// encoder on every single scalar case in every position kind, and on
// random cards: whenever it takes a card, its bytes are the encoder's.
func TestEncodeFastMatchesYAML(t *testing.T) {
	check := func(c Card) bool {
		t.Helper()
		want, err := encode(c, false)
		if err != nil {
			t.Fatal(err)
		}
		n := Normalize(c)
		if bodySafe(n.Content) {
			n.Content = ""
		}
		fast, ok := encodeFast([]byte("---\n"), &n)
		if !ok {
			return false
		}
		got, err := encode(c, true)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("fast encoding differs from the YAML encoder's:\n--- fast\n%s\n--- yaml\n%s", got, want)
		}
		if !strings.HasPrefix(string(want), string(fast)) {
			t.Fatalf("fast front matter is not a prefix of the file:\n%s\n%s", fast, want)
		}
		return true
	}
	base := Card{ID: "kc_x", Statement: "s", Tier: "shu", Status: "promoted", Domain: "project", Field: "f",
		Persistence: "standard", RenderPref: "auto", CreatedBy: "alice", CreatedAt: "2026-11-20T10:00:00.000Z",
		Citations: []Citation{{Evidence: "ev_1", Role: "supporting", SHA256: "h"}},
		Evidence:  []Evidence{{ID: "ev_1", SHA256: "h", Domain: "project", Field: "f", Provenance: "runtime", Actor: "a", ActorType: "human", CreatedAt: "x", Content: "c"}}}
	fastTaken := 0
	for _, s := range fastCases {
		for _, set := range []func(*Card){
			func(c *Card) { c.Statement = s },
			func(c *Card) { c.Scope.Paths = []string{s, s} },
			func(c *Card) { c.Evidence[0].Content = s },
			func(c *Card) { c.Citations[0].Note = s },
			func(c *Card) { c.ReviewAfter = s },
		} {
			c := base
			c.Citations = append([]Citation(nil), base.Citations...)
			c.Evidence = append([]Evidence(nil), base.Evidence...)
			set(&c)
			if check(c) {
				fastTaken++
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	random := 0
	for range 5000 {
		if check(randomCard(r)) {
			random++
		}
	}
	// The fast path must take the common cards, or it is not one.
	if fastTaken < len(fastCases)*5/2 || random < 25 {
		t.Errorf("fast path took %d of %d single-scalar cards and %d of 5000 random ones", fastTaken, len(fastCases)*5, random)
	}
}
