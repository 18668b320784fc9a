package pack_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/cardview"
	"github.com/palacehq/palace/host/internal/jobtest"
	"github.com/palacehq/palace/host/pack"
	"github.com/palacehq/palace/internal/hosterr"
	"github.com/palacehq/palace/policies"
	"github.com/palacehq/palace/store"
)

func TestContextWritesOneEventPerCandidate(t *testing.T) {
	ctx := context.Background()
	fx := newFixture(t, jobtest.Options{Git: true})
	// Unscoped, a card applies everywhere at a reference's salience (20);
	// written 60 days ago and never applied, inactivity (−4) cools it to
	// inspector_only.
	fx.Advance(-60 * 24 * time.Hour)
	cold := fx.card(t, spec{statement: "name tests after behaviour", tier: domain.TierQi})
	fx.Advance(60 * 24 * time.Hour)
	in := fx.card(t, scoped("checkpoint the WAL after imports", domain.TierShu))
	ref := fx.card(t, spec{statement: "prefer small commits", tier: domain.TierQi})
	out := fx.card(t, spec{statement: "docs use sentence case", tier: domain.TierQi, scope: domain.Scope{Paths: []string{"docs/**"}}})
	req := scopedRequest()
	fx.context(t, req)
	if n, _ := fx.Store.CountInjectionRequests(ctx, ""); n != 0 {
		t.Fatalf("a dry run wrote %d injection records", n)
	}
	req.DryRun, req.RequestID = false, "rq_one"
	if p := fx.context(t, req); p.RequestID != "rq_one" {
		t.Errorf("request id %q, want rq_one", p.RequestID)
	}
	if err := fx.Store.FlushRecords(); err != nil {
		t.Fatal(err)
	}
	stats, err := fx.Store.InjectionStats(ctx, []string{in, ref, cold, out}, "2000-01-01T00:00:00.000Z")
	if err != nil {
		t.Fatal(err)
	}
	// A card the request is not about writes nothing: only real
	// candidates count toward cooling; skipped_scope is counted per
	// request, not rolled up per card.
	if got := stats[in].Counts; len(got) != 1 || got[store.OutcomeInlineCompact] != 1 {
		t.Errorf("%s: events %v, want one inline_compact", in, got)
	}
	for _, id := range []string{ref, cold, out} {
		if got, ok := stats[id]; ok {
			t.Errorf("%s: rollups %v for a card the request is not about or that is out of scope, want none", id, got)
		}
	}
	recs, err := fx.Store.InjectionRequests(ctx, "rq_one")
	if err != nil || len(recs) != 1 {
		t.Fatalf("rq_one records = %+v, %v; want one", recs, err)
	}
	wantCards := map[string][]string{"inline_compact": {in}}
	if r := recs[0]; !reflect.DeepEqual(r.Cards, wantCards) || r.ScopeSkipped != 1 {
		t.Errorf("rq_one record = %+v, want cards %v and 1 out of scope", r, wantCards)
	}

	// Without a request id a real run gets a new one.
	req.RequestID = ""
	if p := fx.context(t, req); !strings.HasPrefix(p.RequestID, "rq_") {
		t.Errorf("request id %q, want a new rq_ id", p.RequestID)
	}
}

// TestOutcomesWriteNothing: Outcomes names what a request record would
// hold, whatever DryRun says, and writes nothing.
func TestOutcomesWriteNothing(t *testing.T) {
	ctx := context.Background()
	fx := newFixture(t, jobtest.Options{Git: true})
	in := fx.card(t, scoped("checkpoint the WAL after imports", domain.TierShu))
	req := scopedRequest()
	req.DryRun = false
	rows, err := fx.pl.Outcomes(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].CardID != in || rows[0].Outcome != store.OutcomeInlineCompact || rows[0].RequestID != "" {
		t.Errorf("outcomes = %+v, want %s inline_compact without a request id", rows, in)
	}
	if n, _ := fx.Store.CountInjectionRequests(ctx, ""); n != 0 {
		t.Errorf("Outcomes wrote %d injection records", n)
	}
	if _, err := fx.pl.Outcomes(ctx, pack.ContextRequest{Budget: -1}); hosterr.KindOf(err) != hosterr.KindInvalid {
		t.Errorf("bad request: err = %v, want invalid", err)
	}
}

// TestRecordViewsWarmsCards: a view is recorded per card and counts in
// the card's 30 days; an unknown id writes nothing.
func TestRecordViewsWarmsCards(t *testing.T) {
	ctx := context.Background()
	fx := newFixture(t, jobtest.Options{Git: true})
	id := fx.card(t, scoped("checkpoint the WAL after imports", domain.TierShu))
	before, _ := item(fx.context(t, scopedRequest()), id)
	if err := fx.pl.RecordViews(ctx, id, "card_nope"); hosterr.KindOf(err) != hosterr.KindInvalid || !strings.Contains(err.Error(), "card_nope") {
		t.Fatalf("an unknown id: err = %v, want invalid naming it", err)
	}
	if err := fx.pl.RecordViews(ctx); err != nil {
		t.Fatalf("no ids: %v", err)
	}
	for range 2 {
		if err := fx.pl.RecordViews(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	stats, err := fx.Store.InjectionStats(ctx, []string{id}, "2000-01-01T00:00:00.000Z")
	if err != nil {
		t.Fatal(err)
	}
	if got := stats[id].Counts[store.OutcomeViewed]; got != 2 {
		t.Errorf("views = %d, want 2 (the refused call wrote none)", got)
	}
	after, _ := item(fx.context(t, scopedRequest()), id)
	if after.Counts30d.Viewed != 2 || after.Salience <= before.Salience {
		t.Errorf("after two views: counts %+v, salience %d (was %d), want 2 views and a warmer card", after.Counts30d, after.Salience, before.Salience)
	}
}

// TestContextPolicySetFailure: a policy set that does not load never
// fails a pack: the embedded defaults decide and the pack says so.
func TestContextPolicySetFailure(t *testing.T) {
	fx := newFixture(t, jobtest.Options{Git: true})
	id := fx.card(t, scoped("checkpoint the WAL after imports", domain.TierShu))
	fx.Policies = func(context.Context) (*policies.Set, error) { return nil, errors.New("scope.rego: parse error") }
	fx.build()
	p := fx.context(t, scopedRequest())
	if !strings.Contains(p.Policy.Fallback, "failed to load") || !strings.Contains(p.Policy.Fallback, "scope.rego: parse error") || p.Policy.Scope.Source != "embedded" {
		t.Errorf("policy = %+v, want the embedded defaults and why", p.Policy)
	}
	if it, ok := item(p, id); !ok || it.Lane != domain.LaneCore {
		t.Errorf("the defaults did not decide: items %+v", p.Items)
	}
}

// TestCoolingCountsTheWindow: the 30-day counts group the outcomes
// (applied is either inline form; a reference cools nothing) and the age
// runs from the last application ever, or from creation when there was
// none.
func TestCoolingCountsTheWindow(t *testing.T) {
	now := jobtest.Start
	day := 24 * time.Hour
	c := domain.Card{ID: "card_x", CreatedAt: store.FormatTime(now.Add(-40 * day))}
	window := store.InjectionStats{Counts: map[string]int{store.OutcomeInlineFull: 2, store.OutcomeInlineCompact: 1, store.OutcomeSkippedCooled: 4,
		store.OutcomeTrimmed: 3, store.OutcomeViewed: 5, store.OutcomeRefOnly: 7}}
	ever := store.InjectionStats{Latest: map[string]string{store.OutcomeInlineFull: store.FormatTime(now.Add(-12 * day)),
		store.OutcomeInlineCompact: store.FormatTime(now.Add(-10 * day)), store.OutcomeViewed: store.FormatTime(now.Add(-day))}}
	counts, age := pack.Cooling(window, ever, c, now)
	if want := (policies.Counts30d{Applied: 3, Skipped: 4, Trimmed: 3, Viewed: 5}); counts != want || age != 10 {
		t.Errorf("counts %+v, age %d; want %+v, 10 days since the last application", counts, age, want)
	}
	if _, age := pack.Cooling(store.InjectionStats{}, store.InjectionStats{}, c, now); age != 40 {
		t.Errorf("never applied: age %d, want 40 days since creation", age)
	}
	for _, stamp := range []string{"not a time", store.FormatTime(now.Add(day))} {
		if d := cardview.DaysSince(stamp, now); d != 0 {
			t.Errorf("DaysSince(%q) = %d, want 0", stamp, d)
		}
	}
}
