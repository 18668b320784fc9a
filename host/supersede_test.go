package host_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/intake"
	"github.com/palacehq/palace/host/pack"
)

// distill --from raises a card's tier: the new card is a candidate citing
// the old card's evidence and recording that it supersedes it; the gate
// decides it at its new tier; its promotion retires the old card in the
// same transaction, so the pack holds the new card and not the old.
func TestDistillFromRaisesATier(t *testing.T) {
	e := newCxEnv(t)
	h := e.open(e.repo("r", "https://example.com/o/r.git"), host.Human)
	ctx := context.Background()
	old := e.card(h, cxCard{statement: "Wrap storage errors with the operation", tier: "shu", anchor: "repo", persistence: "foundational", paths: []string{"store/**"}})
	oldCard, err := h.ShowCard(ctx, old)
	if err != nil {
		t.Fatal(err)
	}
	// Same tier, same statement: nothing would change.
	if _, err := h.Distill(ctx, intake.DistillRequest{From: old, Tier: "shu"}); host.KindOf(err) != host.KindInvalid || !strings.Contains(err.Error(), "would repeat "+old) {
		t.Fatalf("--from with nothing new: %v", err)
	}
	c, err := h.Distill(ctx, intake.DistillRequest{From: old, Tier: "dao_ren", Reason: "it holds across the codebase"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != domain.StatusCandidate || c.Statement != oldCard.Statement || c.Tier != domain.TierDaoRen || c.AnchorID != oldCard.AnchorID ||
		!slices.Equal(c.Scope.Paths, []string{"store/**"}) || c.Persistence != domain.PersistenceFoundational || c.Supersedes != old {
		t.Fatalf("new card %+v", c)
	}
	if c.Counts.Supporting != 1 || c.Counts.Verification != 1 {
		t.Errorf("new card cites %+v, want the old card's evidence", c.Counts)
	}
	if got, _ := h.ShowCard(ctx, old); !slices.Equal(got.SupersededBy, []string{c.ID}) || got.Status != domain.StatusPromoted {
		t.Errorf("old card: superseded by %v, status %s", got.SupersededBy, got.Status)
	}
	pack := func() []string {
		p, err := h.Pack().Context(ctx, pack.ContextRequest{Query: "wrap storage errors", File: "store/db.go", DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		return itemIDs(p)
	}
	if ids := pack(); !slices.Contains(ids, old) || slices.Contains(ids, c.ID) {
		t.Fatalf("before the promotion the pack holds %v, want the old card only", ids)
	}
	// dao_ren needs two supporting: the gate says no until there are.
	if _, err := h.Promote(ctx, c.ID, host.PromoteRequest{Reason: "wider law"}); host.KindOf(err) != host.KindDenied {
		t.Fatalf("promotion on the shu evidence: %v, want a denial", err)
	}
	if got, _ := h.ShowCard(ctx, old); got.Status != domain.StatusPromoted {
		t.Fatalf("a denied promotion retired the old card: %s", got.Status)
	}
	more := e.ev(h, "seen again: storage errors wrapped", "general", "store/db.go#L3")
	if _, err := h.Link(ctx, c.ID, host.LinkRequest{Role: "supporting", EvidenceID: more}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Promote(ctx, c.ID, host.PromoteRequest{Reason: "wider law"}); err != nil {
		t.Fatal(err)
	}
	got, err := h.ShowCard(ctx, old)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != domain.StatusRetired {
		t.Fatalf("old card is %s after its replacement's promotion, want retired", got.Status)
	}
	evs, err := h.CardEvents(ctx, old, false)
	if err != nil {
		t.Fatal(err)
	}
	last := evs[len(evs)-1]
	if last.Type != domain.EventRetired || !strings.Contains(last.Reason, "superseded by "+c.ID) || last.DecidedBy != domain.DecidedByGate || last.PolicyHash == "" {
		t.Errorf("retirement event %+v", last)
	}
	if ids := pack(); slices.Contains(ids, old) || !slices.Contains(ids, c.ID) {
		t.Errorf("after the promotion the pack holds %v, want the new card only", ids)
	}
	// A retired card has nothing left to supersede.
	if _, err := h.Distill(ctx, intake.DistillRequest{From: old, Tier: "dao_tian"}); host.KindOf(err) != host.KindInvalid || !strings.Contains(err.Error(), "retired") {
		t.Errorf("--from a retired card: %v", err)
	}
}

// A direct write that supersedes retires the old card at once (a person's
// decision); an agent may propose a replacement (a candidate) but not
// write one.
func TestDistillFromDirectAndAgent(t *testing.T) {
	e := newCxEnv(t)
	dir := e.repo("r", "https://example.com/o/r.git")
	h := e.open(dir, host.Human)
	ctx := context.Background()
	old := e.card(h, cxCard{statement: "Keep handlers small", tier: "qi", anchor: "repo"})
	agent := e.open(dir, host.Agent)
	c, err := agent.Distill(ctx, intake.DistillRequest{From: old, Tier: "shu", Statement: "Keep HTTP handlers small: parse, call, respond"})
	if err != nil || c.Status != domain.StatusCandidate || c.Supersedes != old {
		t.Fatalf("agent's replacement: %+v %v", c, err)
	}
	if _, err := agent.Distill(ctx, intake.DistillRequest{From: old, Tier: "dao_ren", Direct: true, Status: "promoted"}); host.KindOf(err) != host.KindMode {
		t.Errorf("agent direct write: %v, want a mode refusal", err)
	}
	d, err := h.Distill(ctx, intake.DistillRequest{From: old, Tier: "dao_ren", Direct: true, Status: "promoted", Reason: "team decision"})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := h.ShowCard(ctx, old); got.Status != domain.StatusRetired || !slices.Equal(got.SupersededBy, []string{c.ID, d.ID}) {
		t.Errorf("old card after a superseding direct write: %s, superseded by %v", got.Status, got.SupersededBy)
	}
}
