package host_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/intake"
	"github.com/palacehq/palace/host/research"
	"github.com/palacehq/palace/host/teamsync"
)

// Twelve cards one word apart: distill names the existing card a new one
// nearly repeats; the desk lists them as neighbours of each other. (That a
// pack inlines one of them is host/pack's test.)
func TestDistillAndDeskNameNearDuplicates(t *testing.T) {
	e := newCxEnv(t)
	h := e.open(e.repo("r", "https://github.com/acme/r"), host.Human)
	ctx := context.Background()
	var ids []string
	for n := 1; n <= 12; n++ {
		ids = append(ids, e.card(h, cxCard{statement: fmt.Sprintf("Budget filler rule number %d: keep handlers small and focused", n), tier: "shu", anchor: "repo"}))
	}
	e.card(h, cxCard{statement: "Handlers return errors, never panic", tier: "shu", anchor: "repo"})

	// distill of one more names the existing cards, most alike first.
	ev := e.ev(h, "seen again", "general", "")
	c, err := h.Distill(ctx, intake.DistillRequest{Statement: "Budget filler rule number 13: keep handlers small and focused", Tier: "shu", Anchor: "repo", Supporting: []string{ev}})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.NearDuplicates) == 0 || !strings.HasPrefix(c.NearDuplicates[0].Statement, "Budget filler rule number") || c.NearDuplicates[0].Status != domain.StatusPromoted {
		t.Fatalf("near-duplicates of the new card: %+v", c.NearDuplicates)
	}
	if c, err = h.Distill(ctx, intake.DistillRequest{Statement: "Wrap every storage error with its operation", Tier: "shu", Anchor: "repo", Supporting: []string{ev}}); err != nil || len(c.NearDuplicates) != 0 {
		t.Errorf("an unrelated card: near-duplicates %+v (%v)", c.NearDuplicates, err)
	}
	near, err := h.Neighbours(ctx, ids[:1])
	if err != nil {
		t.Fatal(err)
	}
	if len(near[ids[0]]) != 5 {
		t.Errorf("the desk lists %d neighbours of %s, want 5 (its limit): %+v", len(near[ids[0]]), ids[0], near[ids[0]])
	}
}

// Rule-file import, sync and research suggestions name the existing cards
// a new one nearly repeats, as distill does; nothing is refused.
func TestImportSyncAndResearchNameNearDuplicates(t *testing.T) {
	p := newSyncPair(t)
	ctx := context.Background()
	ha := p.a.open(p.da, host.Human)
	existing := p.a.card(ha, cxCard{statement: "Run the linter before every push to the main branch", tier: "shu", anchor: "repo"})

	// Import: the second list item nearly repeats the first, the third an
	// existing card, the fourth nothing.
	rules := "- Wrap every storage error with the failing operation\n- Wrap each storage error with the failing operation\n" +
		"- Run the linter before each push to the main branch\n- Document exported identifiers\n"
	if err := os.WriteFile(filepath.Join(p.da, "AGENTS.md"), []byte(rules), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := ha.ImportRules(ctx, intake.ImportRequest{Files: []string{"AGENTS.md"}})
	if err != nil {
		t.Fatal(err)
	}
	got := res.Files[0].Rules
	if len(got) != 4 || len(got[0].NearDuplicates) != 0 || len(got[1].NearDuplicates) != 1 || got[1].NearDuplicates[0].ID != got[0].CardID ||
		len(got[2].NearDuplicates) != 1 || got[2].NearDuplicates[0].ID != existing || len(got[3].NearDuplicates) != 0 {
		t.Fatalf("import near-duplicates: %+v", got)
	}

	// Research: a candidate insight that nearly repeats a card.
	report := `{"report_id": "rr-lint", "title": "Linting", "about": "project",
		"sources": [{"id": "s1", "url": "https://example.com/lint"}],
		"findings": [{"id": "f1", "content": "Linters catch most style slips", "source": "s1", "field": "ci"}],
		"candidate_insights": [{"statement": "Run the linter before every push to main", "findings": ["f1"]}]}`
	plan, err := ha.Research(ctx, research.Request{Report: []byte(report), Action: "plan"})
	if err != nil {
		t.Fatal(err)
	}
	if s := plan.Suggestions; len(s) != 1 || len(s[0].NearDuplicates) == 0 || s[0].NearDuplicates[0].ID != existing {
		t.Fatalf("research suggestions: %+v", plan.Suggestions)
	}

	// Sync: a teammate's card arrives that nearly repeats one of B's.
	hb := p.b.open(p.db, host.Human)
	mine := promoted(t, p.b, hb, "Set the busy timeout before enabling WAL mode")
	promoted(t, p.a, ha, "Set the busy timeout before enabling WAL journaling")
	mustSync(t, ha, teamsync.SyncRequest{})
	p.a.commitReviewed(p.da, "share")
	p.b.git(p.db, "pull", "-q")
	p.b.markReviewed(p.db)
	rep := mustSync(t, hb, teamsync.SyncRequest{})
	var named []string
	for _, n := range rep.NearDuplicates {
		for _, c := range n.NearDuplicates {
			named = append(named, c.ID)
		}
	}
	if !slices.Contains(named, mine) {
		t.Errorf("sync imported %v and named %v as near-duplicates, want %s among them", rep.Imported, named, mine)
	}
}
