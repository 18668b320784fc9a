package cardfile

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"go.yaml.in/yaml/v3"
)

// decodeYAML is the YAML path of Decode for a front matter.
func decodeYAML(fm []byte) (Parsed, bool) {
	p := Parsed{Lines: map[string]int{}}
	var root yaml.Node
	if yaml.Unmarshal(fm, &root) != nil || len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return p, false
	}
	d := &decoder{}
	d.card(root.Content[0], &p)
	return p, len(d.findings) == 0
}

// checkDecodeFast compares the fast reading of fm with the YAML path's
// whenever the fast path takes it.
func checkDecodeFast(t *testing.T, fm []byte) bool {
	t.Helper()
	fast, ok := decodeFast(fm)
	if !ok {
		return false
	}
	want, wok := decodeYAML(fm)
	if !wok {
		t.Fatalf("fast path read front matter the YAML path refuses:\n%s", fm)
	}
	if !reflect.DeepEqual(fast, want) {
		t.Fatalf("fast reading differs from the YAML path's:\n%s\nfast: %#v\nyaml: %#v", fm, fast, want)
	}
	return true
}

func frontMatter(t *testing.T, c Card) []byte {
	t.Helper()
	b, err := Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	fm, _, ok := split(b)
	if !ok {
		t.Fatalf("no front matter in\n%s", b)
	}
	return fm
}

// TestDecodeFastMatchesYAML reads encoded cards, and mutations of them,
// both ways: whatever the fast path takes, it reads as the YAML path does
// (card, key lines, citation and evidence lines).
func TestDecodeFastMatchesYAML(t *testing.T) {
	typical := Card{ID: "kc_00000000000000000000000001", Statement: "Service 1: defer tx.Rollback right after BeginTx", Tier: "shu",
		Status: "promoted", Domain: "project", Field: "field1", Scope: Scope{Paths: []string{"svc1/**"}, Languages: []string{"go"}},
		Persistence: "standard", RenderPref: "auto", CreatedBy: "alice", CreatedAt: "2026-11-01T10:00:00.000Z",
		LastEvent: &Event{Type: "promoted", At: "2026-11-02T10:00:00.000Z", Actor: "alice", Reviewer: Reviewer{Name: "alice", Type: "human"},
			PolicyHash: "5abfda01d9361ef9028e4720d09d456b93d6c9af8175a5d2d11bd0c8d991d69f"},
		Citations: []Citation{{Evidence: "ev_1", Role: "supporting", SourceRef: "svc1/db.go#L12", SHA256: ContentSHA256("a, b: c")},
			{Evidence: "ev_2", Role: "verification", SHA256: ContentSHA256("it's fine"), Note: "see #12"}},
		Evidence: []Evidence{
			{ID: "ev_1", SHA256: ContentSHA256("a, b: c"), Domain: "project", Field: "general", Provenance: "runtime", SourceRef: "svc1/db.go#L12",
				Tags: []string{"x", "a b"}, Actor: "alice", ActorType: "human", CreatedAt: "2026-11-01T09:00:00.000Z", Content: "a, b: c"},
			{ID: "ev_2", SHA256: ContentSHA256("it's fine"), Domain: "project", Field: "general", Provenance: "runtime", Actor: "alice",
				ActorType: "human", CreatedAt: "2026-11-01T09:30:00.000Z", Redacted: true, Content: "it's fine"},
		},
		Content: "Body text.\n\nMore."}
	if !checkDecodeFast(t, frontMatter(t, typical)) {
		t.Fatal("the fast path does not take a typical card")
	}
	bare := typical
	bare.LastEvent, bare.Citations, bare.Evidence, bare.Scope = nil, nil, nil, Scope{}
	bare.ReviewAfter, bare.ExpiresAt, bare.OriginCard = "2027-01-01", "2027-02-01T00:00:00.000Z", "kc_x"
	if !checkDecodeFast(t, frontMatter(t, bare)) {
		t.Fatal("the fast path does not take a card without lists")
	}
	// Each tricky scalar in each kind of position.
	single := 0
	for _, s := range fastCases {
		for _, set := range []func(*Card){
			func(c *Card) { c.Statement = s },
			func(c *Card) { c.Scope.Paths = []string{s, "b"} },
			func(c *Card) { c.Evidence[0].Content = s },
			func(c *Card) { c.Evidence[1].Tags = []string{s} },
			func(c *Card) { c.Citations[1].Note = s },
			func(c *Card) { c.LastEvent.PolicyHash = s },
			func(c *Card) { c.ExpiresAt = s },
		} {
			c := typical
			c.Citations = append([]Citation(nil), typical.Citations...)
			c.Evidence = append([]Evidence(nil), typical.Evidence...)
			ev := *typical.LastEvent
			c.LastEvent = &ev
			set(&c)
			if checkDecodeFast(t, frontMatter(t, c)) {
				single++
			}
		}
	}
	if single < len(fastCases)*7/2 {
		t.Errorf("the fast path took %d of %d cards with one tricky scalar", single, len(fastCases)*7)
	}
	r := rand.New(rand.NewPCG(3, 4))
	typicalFM := frontMatter(t, typical)
	taken, mutated := 0, 0
	for n := range 6000 {
		fm := typicalFM
		if n%2 == 0 {
			fm = frontMatter(t, randomCard(r))
			if checkDecodeFast(t, fm) {
				taken++
			}
		}
		// Mutations: a byte changed, dropped or doubled.
		b := []byte(string(fm))
		i := r.IntN(len(b))
		switch r.IntN(3) {
		case 0:
			b[i] = " :'\"-,[]#x\n"[r.IntN(11)]
		case 1:
			b = append(b[:i], b[i+1:]...)
		default:
			b = append(b[:i+1], b[i:]...)
		}
		if len(b) > 0 && b[len(b)-1] == '\n' && checkDecodeFast(t, b) {
			mutated++
		}
	}
	t.Logf("fast path took %d random cards and %d mutated ones", taken, mutated)
}
