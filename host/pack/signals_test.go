package pack_test

import (
	"context"
	"strings"
	"testing"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/cardview"
	"github.com/palacehq/palace/host/internal/jobtest"
	"github.com/palacehq/palace/host/pack"
	"github.com/palacehq/palace/store"
)

// A signal counts for requests like the one that produced it: a rejection
// of a card for one request cools it there and nowhere else; an actor's
// second word for the same request counts nowhere; another actor's used
// signal warms it.
func TestSignalsCountForLikeRequestsOnly(t *testing.T) {
	ctx := context.Background()
	fx := newFixture(t, jobtest.Options{Git: true})
	id := fx.card(t, spec{statement: "Retry SQLite writes after a busy timeout", tier: domain.TierShu, field: "storage"})
	fx.card(t, spec{statement: "Wrap each migration in one transaction", tier: domain.TierShu, field: "storage"})
	asked := pack.ContextRequest{Query: "sqlite busy retry writes", File: "store/store.go", DryRun: true}
	other := pack.ContextRequest{Query: "migration transaction", File: "store/schema.go", DryRun: true}
	salience := func(req pack.ContextRequest) (int, map[string]int) {
		t.Helper()
		p := fx.context(t, req)
		if it, ok := item(p, id); ok {
			return it.Salience, it.SalienceBreakdown
		}
		for _, s := range p.Skipped {
			if s.ID == id {
				return s.Salience, nil
			}
		}
		t.Fatalf("card %s is not in the pack of %q", id, req.Query)
		return 0, nil
	}
	n := 0
	signal := func(sig, actor string) {
		t.Helper()
		n++
		err := fx.Store.InsertAdoption(ctx, store.AdoptionEvent{ID: store.NewID(store.AdoptionPrefix, fx.Now()), Signal: sig, CardID: id,
			RequestID: "rq_asked", RequestTerms: pack.Signature(asked.Query, asked.File, asked.Field, asked.Intents),
			Actor: actor, ActorType: domain.ActorHuman, CreatedAt: store.FormatTime(fx.Now())})
		if err != nil {
			t.Fatal(err)
		}
	}
	sameBefore, _ := salience(asked)
	otherBefore, _ := salience(other)

	signal("rejected", "ana")
	sameAfter, bd := salience(asked)
	if sameAfter >= sameBefore || bd["rejected"] != -30 {
		t.Errorf("same request: salience %d → %d (breakdown %v), want 30 lower", sameBefore, sameAfter, bd)
	}
	if otherAfter, _ := salience(other); otherAfter != otherBefore {
		t.Errorf("another request: salience %d → %d, want unchanged", otherBefore, otherAfter)
	}
	signal("used", "ana")
	if s, _ := salience(asked); s != sameAfter {
		t.Errorf("after a repeat: salience %d, want %d", s, sameAfter)
	}
	signal("used", "reviewer")
	if s, bd := salience(asked); s != sameAfter+12 || bd["adopted"] != 12 {
		t.Errorf("after another actor's used: salience %d (breakdown %v), want %d", s, bd, sameAfter+12)
	}
	// The signals are recorded, and the verdicts say which count.
	sigs, err := fx.Store.CardSignals(ctx, []string{id}, "2000-01-01T00:00:00.000Z")
	if err != nil {
		t.Fatal(err)
	}
	v := cardview.SignalVerdicts(sigs)
	if len(v) != n || v[0] != "" || v[1] != cardview.NotCountedRepeat || v[2] != "" {
		t.Errorf("verdicts %q, want the second a repeat", v)
	}
	if r := cardview.NotCountedReason(v[1], id, domain.ActorHuman); !strings.Contains(r, "a repeat") || !strings.Contains(r, id) {
		t.Errorf("reason %q", r)
	}
	if c, err := fx.Store.Card(ctx, id); err != nil || c.Status != domain.StatusPromoted {
		t.Errorf("status %q %v after signals, want promoted", c.Status, err)
	}
}

// TestFoundationalInlineCap: a foundational card that asks for its full
// text renders compact once statement and content pass the cap (180 by
// default); a short one keeps its full form.
func TestFoundationalInlineCap(t *testing.T) {
	fx := newFixture(t, jobtest.Options{Git: true})
	short := scoped("checkpoint the WAL after imports", domain.TierShu)
	short.persistence, short.renderPref, short.content = domain.PersistenceFoundational, domain.RenderInlineFull, "Readers scan less."
	long := scoped("vacuum the store only from maintenance", domain.TierShu)
	long.persistence, long.renderPref, long.content = domain.PersistenceFoundational, domain.RenderInlineFull, strings.Repeat("A vacuum rewrites the whole file. ", 8)
	shortID, longID := fx.card(t, short), fx.card(t, long)
	req := scopedRequest()
	req.Query = "checkpoint WAL imports vacuum store maintenance"
	p := fx.context(t, req)
	s, ok1 := item(p, shortID)
	l, ok2 := item(p, longID)
	if !ok1 || !ok2 || s.RenderForm != domain.FormInlineFull || l.RenderForm != domain.FormInlineCompact {
		t.Errorf("short %s (%v), long %s (%v): want inline_full and inline_compact", s.RenderForm, ok1, l.RenderForm, ok2)
	}
	if !strings.Contains(p.Rendered, "Readers scan less.") || strings.Contains(p.Rendered, "A vacuum rewrites") {
		t.Errorf("contents rendered wrong:\n%s", p.Rendered)
	}
}
