package pack_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/authority"
	"github.com/palacehq/palace/host/internal/jobtest"
	"github.com/palacehq/palace/host/pack"
)

// Twelve cards one word apart: a pack inlines one and lists the rest as
// references to it.
func TestNearDuplicatesAreInlinedOnce(t *testing.T) {
	fx := newFixture(t, jobtest.Options{Git: true})
	for n := 1; n <= 12; n++ {
		fx.card(t, spec{statement: fmt.Sprintf("Budget filler rule number %d: keep handlers small and focused", n), tier: domain.TierShu, anchor: domain.AnchorRepo})
	}
	other := fx.card(t, spec{statement: "Handlers return errors, never panic", tier: domain.TierShu, anchor: domain.AnchorRepo})
	p := fx.context(t, pack.ContextRequest{Query: "keep handlers small", DryRun: true})
	var first string
	refs := 0
	for _, it := range p.Items {
		if it.ID == other {
			continue
		}
		switch it.RenderForm {
		case domain.FormInlineCompact, domain.FormInlineFull:
			if first != "" {
				t.Errorf("two near-duplicates inline: %s and %s", first, it.ID)
			}
			first = it.ID
		case domain.FormRefOnly:
			refs++
		}
	}
	if first == "" || refs != 11 {
		t.Fatalf("inline %q, %d references; want one inline and 11 references:\n%s", first, refs, p.Rendered)
	}
	for _, it := range p.Items {
		if it.RenderForm == domain.FormRefOnly && it.ID != other {
			if it.NearDuplicateOf != first || !strings.Contains(p.Rendered, "`"+it.ID+"` shu · field general · repo · near-duplicate of `"+first+"`") {
				t.Errorf("%s: near-duplicate of %q, want a reference to %s:\n%s", it.ID, it.NearDuplicateOf, first, p.Rendered)
			}
		}
	}
	if o, _ := item(p, other); o.NearDuplicateOf != "" {
		t.Errorf("the unrelated card is a near-duplicate of %s", o.NearDuplicateOf)
	}
	for _, s := range p.Sections {
		if strings.Contains(s.Title, "Scoped") {
			t.Errorf("section %q is titled %q though no card of it has a scope", s.Name, s.Title)
		}
	}
}

// A published card and its copy state the same: a pack shows one, the
// innermost anchor's, and skips the other as its duplicate; hints and
// tagged cards show it once too.
func TestPublishedCopyIsShownOnce(t *testing.T) {
	ctx := context.Background()
	fx := newFixture(t, jobtest.Options{Git: true})
	c := scoped("Open SQLite in WAL mode with a busy timeout", domain.TierQi).at(domain.AnchorRepo)
	c.trigger.Patterns = []string{`sql\.Open\(`}
	repo := fx.card(t, c)
	out := fx.Apply(t, authority.Change{Op: authority.OpPublish, CardID: repo, Target: string(domain.AnchorGlobal), Reason: "holds for every repository"})
	copyID := out.CopyID
	if copyID == "" || copyID == repo {
		t.Fatalf("publish outcome %+v names no copy", out)
	}
	p := fx.context(t, scopedRequest())
	if got := itemIDs(p); len(got) != 1 || got[0] != repo {
		t.Fatalf("items %v, want the repo card %s alone", got, repo)
	}
	var dup *pack.SkippedCard
	for i, s := range p.Skipped {
		if s.ID == copyID {
			dup = &p.Skipped[i]
		}
	}
	if dup == nil || dup.Reason != "duplicate" || dup.DuplicateOf != repo || dup.Anchor != "global" {
		t.Errorf("the global copy: %+v, want skipped as a duplicate of %s", dup, repo)
	}

	h, err := fx.pl.Hints(ctx, nil, pack.HintsRequest{File: "store/db.go", Text: "db, _ := sql.Open(\"sqlite\", p)\n"})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Matches) != 1 || h.Matches[0].Card.ID != repo {
		t.Errorf("hints %+v, want one match, the repo card's", h.Matches)
	}
	tagged, err := fx.pl.TaggedCards(ctx, nil, pack.HintsRequest{File: "store/db.go"}, "STORAGE")
	if err != nil {
		t.Fatal(err)
	}
	if len(tagged) != 1 || tagged[0].ID != repo {
		t.Errorf("tagged %+v, want the repo card alone", tagged)
	}
	if none, err := fx.pl.TaggedCards(ctx, nil, pack.HintsRequest{File: "docs/x.md"}, "nothing"); err != nil || len(none) != 0 {
		t.Errorf("an unknown word: %+v, %v", none, err)
	}
}
