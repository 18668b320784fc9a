package intake_test

import (
	"strings"
	"testing"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/intake"
	"github.com/palacehq/palace/host/internal/jobtest"
	"github.com/palacehq/palace/internal/hosterr"
)

// TestPrepareCardValidates: a card to distill is checked whole before
// anything is read or written, each refusal naming its field.
func TestPrepareCardValidates(t *testing.T) {
	f := jobtest.New(t, jobtest.Options{Git: true})
	in := newIntake(f)
	ok := intake.DistillRequest{Statement: "Quote paths in shell scripts", Tier: "qi", Supporting: []string{"ev_1"}}
	with := func(edit func(*intake.DistillRequest)) intake.DistillRequest {
		r := ok
		edit(&r)
		return r
	}
	for _, c := range []struct {
		name string
		req  intake.DistillRequest
		kind hosterr.Kind
		want string
	}{
		{"empty statement", with(func(r *intake.DistillRequest) { r.Statement = "  " }), hosterr.KindInvalid, "statement is empty"},
		{"long statement", with(func(r *intake.DistillRequest) { r.Statement = strings.Repeat("é", intake.MaxStatementRunes+1) }), hosterr.KindInvalid, "281 characters, over 280"},
		{"not UTF-8", with(func(r *intake.DistillRequest) { r.Content = "\xff" }), hosterr.KindInvalid, "valid UTF-8"},
		{"big content", with(func(r *intake.DistillRequest) { r.Content = strings.Repeat("x", intake.MaxContentBytes+1) }), hosterr.KindInvalid, "over the 1 MiB limit"},
		{"NUL", with(func(r *intake.DistillRequest) { r.Statement = "a\x00b" }), hosterr.KindInvalid, "statement"},
		{"no tier", with(func(r *intake.DistillRequest) { r.Tier = "" }), hosterr.KindInvalid, "tier is required"},
		{"bad tier", with(func(r *intake.DistillRequest) { r.Tier = "sage" }), hosterr.KindInvalid, "tier"},
		{"no support", with(func(r *intake.DistillRequest) { r.Supporting = nil }), hosterr.KindInvalid, "--supporting"},
		{"global qi", with(func(r *intake.DistillRequest) { r.Anchor = "global" }), hosterr.KindInvalid, "only dao_tian starts at the global anchor"},
		{"direct candidate", with(func(r *intake.DistillRequest) { r.Direct, r.Status = true, "candidate" }), hosterr.KindInvalid, "--direct needs --status promoted"},
		{"status without direct", with(func(r *intake.DistillRequest) { r.Status = "promoted" }), hosterr.KindInvalid, "needs --direct"},
		{"persistence", with(func(r *intake.DistillRequest) { r.Persistence = "forever" }), hosterr.KindInvalid, "persistence"},
		{"render", with(func(r *intake.DistillRequest) { r.RenderPref = "loud" }), hosterr.KindInvalid, "render_pref"},
		{"trigger", with(func(r *intake.DistillRequest) { r.Trigger = domain.Trigger{Patterns: []string{"("}} }), hosterr.KindInvalid, ""},
		{"review date", with(func(r *intake.DistillRequest) { r.ReviewAfter = "soon" }), hosterr.KindInvalid, "review_after \"soon\" is not a date"},
		{"expired", with(func(r *intake.DistillRequest) { r.ExpiresAt = "2020-01-01" }), hosterr.KindInvalid, "not in the future"},
		{"domain", with(func(r *intake.DistillRequest) { r.Domain = "galaxy" }), hosterr.KindInvalid, "domain"},
	} {
		_, _, err := in.PrepareCard(c.req)
		wantKind(t, c.name, err, c.kind, c.want)
	}

	card, kind, err := in.PrepareCard(with(func(r *intake.DistillRequest) {
		r.Statement = "  Cafe\u0301 rules  " // decomposed: kept in NFC
		r.ReviewAfter, r.ExpiresAt = "2026-06-01", "2027-01-01"
	}))
	if err != nil {
		t.Fatal(err)
	}
	if kind != domain.AnchorWorktree || card.Statement != "Caf\u00e9 rules" || card.Status != domain.StatusCandidate || card.Domain != domain.DomainProject ||
		card.Field != "general" || card.Persistence != domain.PersistenceStandard || card.RenderPref != domain.RenderAuto || card.CreatedBy != "ana" ||
		!strings.HasPrefix(card.ReviewAfter, "2026-06-01") || !strings.HasPrefix(card.ExpiresAt, "2027-01-01") {
		t.Errorf("prepared %+v at %s", card, kind)
	}
	law, kind, err := in.PrepareCard(with(func(r *intake.DistillRequest) { r.Tier, r.Direct, r.Status = "dao_tian", true, "canonical" }))
	if err != nil || kind != domain.AnchorGlobal || law.Status != domain.StatusCanonical || law.Domain != domain.DomainGlobal {
		t.Errorf("a person's direct dao_tian law: %+v at %s, %v; want canonical at the global anchor", law, kind, err)
	}

	agent := newIntake(jobtest.New(t, jobtest.Options{Git: true, Agent: true}))
	_, _, err = agent.PrepareCard(with(func(r *intake.DistillRequest) { r.Tier, r.Direct, r.Status = "dao_tian", true, "canonical" }))
	wantKind(t, "an agent's direct dao_tian law", err, hosterr.KindMode)
}

func TestResolveAnchorKind(t *testing.T) {
	f := jobtest.New(t, jobtest.Options{Git: true})
	for in, want := range map[string]domain.AnchorKind{"": domain.AnchorWorktree, "repo": domain.AnchorRepo, "global": domain.AnchorGlobal} {
		if got, err := intake.ResolveAnchorKind(f.Loc, "anchor", in); err != nil || got != want {
			t.Errorf("ResolveAnchorKind(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	outside := jobtest.New(t, jobtest.Options{})
	if got, err := intake.ResolveAnchorKind(outside.Loc, "anchor", ""); err != nil || got != domain.AnchorGlobal {
		t.Errorf("outside git the innermost anchor is %s (%v), want global", got, err)
	}
	_, err := intake.ResolveAnchorKind(outside.Loc, "anchor", "worktree")
	wantKind(t, "worktree outside git", err, hosterr.KindInvalid, "needs a git checkout")
}
