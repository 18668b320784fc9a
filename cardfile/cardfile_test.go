package cardfile_test

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/palacehq/palace/cardfile"
)

func sample() cardfile.Card {
	ev := "store.Open must set busy_timeout before WAL.\nSeen in store/store.go"
	return cardfile.Card{
		ID:          "kc_01hzzzzzzzzzzzzzzzzzzzzzzz",
		Statement:   "Set busy_timeout before enabling WAL: yes, really",
		Tier:        "shu",
		Status:      "promoted",
		Domain:      "project",
		Field:       "storage",
		Scope:       cardfile.Scope{Paths: []string{"store/**"}, Languages: []string{"go"}},
		Triggers:    cardfile.Triggers{Patterns: []string{`sql\.Open`}},
		Persistence: "standard",
		RenderPref:  "auto",
		ReviewAfter: "2027-01-01T00:00:00.000Z",
		CreatedBy:   "alice",
		CreatedAt:   "2026-11-20T10:00:00.000Z",
		LastEvent: &cardfile.Event{Type: "promoted", At: "2026-11-21T10:00:00.000Z", Actor: "alice",
			Reviewer: cardfile.Reviewer{Name: "alice", Type: "human"}, PolicyHash: "abc123"},
		Citations: []cardfile.Citation{
			{Evidence: "ev_02", Role: "verification", SourceRef: "test", SHA256: cardfile.ContentSHA256("passed")},
			{Evidence: "ev_01", Role: "supporting", SourceRef: "store/store.go#L10", SHA256: cardfile.ContentSHA256(ev)},
		},
		Evidence: []cardfile.Evidence{
			{ID: "ev_02", SHA256: cardfile.ContentSHA256("passed"), Domain: "project", Field: "storage", Provenance: "runtime",
				SourceRef: "test", Actor: "alice", ActorType: "human", CreatedAt: "2026-11-20T09:00:00.000Z", Content: "passed"},
			{ID: "ev_01", SHA256: cardfile.ContentSHA256(ev), Domain: "project", Field: "storage", Provenance: "runtime",
				SourceRef: "store/store.go#L10", Tags: []string{"sqlite"}, Actor: "alice", ActorType: "human",
				CreatedAt: "2026-11-20T09:00:00.000Z", Content: ev},
		},
		Content: "## Why\n\nWAL without a busy timeout fails under concurrent writers.",
	}
}

func encode(t *testing.T, c cardfile.Card) []byte {
	t.Helper()
	b, err := cardfile.Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRoundTripIsByteIdentical(t *testing.T) {
	for name, content := range map[string]string{
		"body":              "## Why\n\nWAL without a busy timeout fails.",
		"empty":             "",
		"trailing newline":  "ends with a newline\n",
		"carriage return":   "a\r\nb",
		"dashes in body":    "before\n---\nafter",
		"leading blank":     "\n\nindented",
		"unicode":           "道 — 術 · ✓",
		"front matter look": "---\nid: kc_x\n---",
	} {
		t.Run(name, func(t *testing.T) {
			c := sample()
			c.Content = content
			b := encode(t, c)
			if !bytes.HasSuffix(b, []byte("\n")) || bytes.HasSuffix(b, []byte("\n\n")) {
				t.Errorf("file must end with exactly one newline:\n%q", b)
			}
			if bytes.Contains(b, []byte("\r")) {
				t.Errorf("file holds a carriage return:\n%q", b)
			}
			p, fs := cardfile.Decode(".palace/cards/"+c.ID+".md", b)
			if len(fs) > 0 {
				t.Fatalf("findings on an encoded card: %v\n%s", fs, b)
			}
			if want := cardfile.Normalize(c); !reflect.DeepEqual(cardfile.Normalize(p.Card), want) {
				t.Errorf("round trip changed the card:\n got %+v\nwant %+v", p.Card, want)
			}
			if again := encode(t, p.Card); !bytes.Equal(again, b) {
				t.Errorf("re-encoding differs:\n%s\n---- vs ----\n%s", again, b)
			}
		})
	}
}

func TestEncodeKeyOrderAndShape(t *testing.T) {
	b := string(encode(t, sample()))
	var last int
	for _, k := range []string{"\nid:", "\nstatement:", "\ntier:", "\nstatus:", "\ndomain:", "\nfield:", "\nscope:",
		"\ntriggers:", "\npersistence:", "\nrender_pref:", "\nreview_after:", "\ncreated_by:", "\ncreated_at:",
		"\nlast_event:", "\ncitations:", "\nevidence:", "\n---\n## Why"} {
		i := strings.Index(b, k)
		if i < last {
			t.Fatalf("key %q missing or out of order in\n%s", k, b)
		}
		last = i
	}
	// Citations in role order, supporting first; evidence by id.
	if strings.Index(b, "evidence: ev_01") > strings.Index(b, "evidence: ev_02") {
		t.Errorf("citations not in role order:\n%s", b)
	}
	if !strings.Contains(b, "  paths: [store/**]\n") {
		t.Errorf("scope lists are not in flow style:\n%s", b)
	}
}

func codes(fs []cardfile.Finding) string {
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%d:%s", f.Line, f.Code))
	}
	return strings.Join(out, " ")
}

func TestDecodeFindings(t *testing.T) {
	good := string(encode(t, sample()))
	lineOf := func(s, sub string) int { return strings.Count(s[:strings.Index(s, sub)], "\n") + 1 }
	tests := []struct {
		name string
		file string
		want string
	}{
		{"unknown tier", strings.Replace(good, "tier: shu", "tier: sage", 1), fmt.Sprintf("%d:PC005", lineOf(good, "tier:"))},
		{"unknown status", strings.Replace(good, "status: promoted", "status: blessed", 1), fmt.Sprintf("%d:PC005", lineOf(good, "status:"))},
		{"unknown key", strings.Replace(good, "tier: shu", "tier: shu\ncolour: red", 1), fmt.Sprintf("%d:PC003", lineOf(good, "tier:")+1)},
		{"repeated key", strings.Replace(good, "tier: shu", "tier: shu\ntier: qi", 1), fmt.Sprintf("%d:PC003", lineOf(good, "tier:")+1)},
		{"no front matter", "# just markdown\n", "1:PC001"},
		{"unterminated front matter", "---\nid: kc_1\n", "1:PC001"},
		{"yaml syntax", strings.Replace(good, "field: storage", "field: [storage", 1), ""},
		{"missing statement", strings.Replace(good, "statement: 'Set busy_timeout before enabling WAL: yes, really'\n", "", 1), "1:PC004"},
		{"conflict markers", "<<<<<<< HEAD\n" + good + "=======\n" + good + ">>>>>>> theirs\n", ""},
		{"bad evidence hash", strings.Replace(good, "content: passed", "content: failed", 1), ""},
		{"invalid utf8", strings.Replace(good, "storage", "stor\xffage", 1), fmt.Sprintf("%d:PC008", lineOf(good, "storage"))},
		{"too large", good + strings.Repeat("x", cardfile.MaxFileBytes), "1:PC007"},
		{"scalar for list", strings.Replace(good, "paths: [store/**]", "paths: store/**", 1), fmt.Sprintf("%d:PC002", lineOf(good, "paths:"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, fs := cardfile.Decode(".palace/cards/kc_01hzzzzzzzzzzzzzzzzzzzzzzz.md", []byte(tt.file))
			if !cardfile.HasErrors(fs) {
				t.Fatalf("no error finding for %s", tt.name)
			}
			if tt.want != "" && codes(fs) != tt.want {
				t.Errorf("findings %q, want %q (%v)", codes(fs), tt.want, fs)
			}
			for _, f := range fs {
				if f.Line < 1 || f.Path == "" || f.Message == "" {
					t.Errorf("finding without a place or message: %+v", f)
				}
			}
		})
	}
}

func TestDecodeConflictMarkerLines(t *testing.T) {
	good := string(encode(t, sample()))
	file := "<<<<<<< HEAD\n" + good + "=======\n" + good + ">>>>>>> theirs\n"
	_, fs := cardfile.Decode("x.md", []byte(file))
	n := strings.Count(good, "\n")
	want := fmt.Sprintf("1:PC006 %d:PC006 %d:PC006", n+2, 2*n+3)
	if got := codes(fs); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestDecodeFileNameMustMatchID(t *testing.T) {
	b := encode(t, sample())
	_, fs := cardfile.Decode(".palace/cards/kc_other.md", b)
	if got := codes(fs); got != "2:PC009" {
		t.Errorf("got %q, want 2:PC009", got)
	}
}

func TestDecodeCitationWithoutEvidence(t *testing.T) {
	c := sample()
	c.Evidence = c.Evidence[:1] // ev_02 only
	b := encode(t, c)
	_, fs := cardfile.Decode("", b)
	if len(fs) != 1 || fs[0].Code != cardfile.CodeCitation || !strings.Contains(fs[0].Message, "ev_01") {
		t.Fatalf("got %v, want one PC010 naming ev_01", fs)
	}
	if want := strings.Count(string(b[:bytes.Index(b, []byte("- evidence: ev_01"))]), "\n") + 1; fs[0].Line != want {
		t.Errorf("line %d, want %d", fs[0].Line, want)
	}
}

func TestDecodeCRLFIsAWarning(t *testing.T) {
	b := bytes.ReplaceAll(encode(t, sample()), []byte("\n"), []byte("\r\n"))
	p, fs := cardfile.Decode("", b)
	if cardfile.HasErrors(fs) || len(fs) != 1 || fs[0].Code != cardfile.CodeLineEndings {
		t.Fatalf("got %v, want one PC015 warning", fs)
	}
	if p.Card.ID != sample().ID {
		t.Errorf("card not read: %+v", p.Card)
	}
}

func FuzzDecode(f *testing.F) {
	c := sample()
	b, _ := cardfile.Encode(c)
	f.Add(b)
	f.Add([]byte("---\n---\n"))
	f.Add([]byte("---\nid: [\n---\n"))
	f.Add([]byte("<<<<<<< a\n=======\n>>>>>>> b\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, fs := cardfile.Decode("f.md", b)
		if cardfile.HasErrors(fs) {
			return
		}
		// A file that decodes cleanly encodes to a file that decodes to the
		// same card.
		out, err := cardfile.Encode(p.Card)
		if err != nil {
			t.Fatalf("encode a decoded card: %v", err)
		}
		q, fs2 := cardfile.Decode("", out)
		if cardfile.HasErrors(fs2) {
			t.Fatalf("re-encoded card has findings %v:\n%s", fs2, out)
		}
		if !reflect.DeepEqual(cardfile.Normalize(p.Card), cardfile.Normalize(q.Card)) {
			t.Fatalf("re-encoded card differs:\n%+v\n%+v", p.Card, q.Card)
		}
	})
}
