package host_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/adoption"
	"github.com/palacehq/palace/host/pack"
)

// A signal counts for requests like the one that produced it: a rejection
// of a card for one request cools it there and nowhere else, and no signal
// ever changes its status or its gate.
func TestSignalsCountForLikeRequestsOnly(t *testing.T) {
	ctx := context.Background()
	e := newCxEnv(t)
	dir := e.repo("app", "https://github.com/acme/app")
	h := e.openClock(dir)
	id := e.card(h, cxCard{statement: "Retry SQLite writes after a busy timeout", tier: "shu", field: "storage"})
	e.card(h, cxCard{statement: "Wrap each migration in one transaction", tier: "shu", field: "storage"})

	asked := pack.ContextRequest{Query: "sqlite busy retry writes", File: "store/store.go"}
	other := pack.ContextRequest{Query: "migration transaction", File: "store/schema.go", DryRun: true}
	p, err := h.Pack().Context(ctx, asked)
	if err != nil {
		t.Fatal(err)
	}
	dry := asked
	dry.DryRun = true
	salience := func(req pack.ContextRequest) (int, map[string]int) {
		t.Helper()
		p, err := h.Pack().Context(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range p.Items {
			if it.ID == id {
				return it.Salience, it.SalienceBreakdown
			}
		}
		for _, s := range p.Skipped {
			if s.ID == id {
				return s.Salience, nil
			}
		}
		t.Fatalf("card %s is not in the pack of %q", id, req.Query)
		return 0, nil
	}
	sameBefore, _ := salience(dry)
	otherBefore, _ := salience(other)
	gateBefore, err := h.Gate(ctx, id, host.GateRequest{})
	if err != nil {
		t.Fatal(err)
	}

	res, err := h.Adoption().Adopt(ctx, adoption.Request{Signal: "rejected", CardID: id, RequestID: p.RequestID, Note: "not this code path"})
	if err != nil || !res.Written || res.Event.RequestTerms == "" {
		t.Fatalf("adopt: %+v, %v", res, err)
	}
	sameAfter, bd := salience(dry)
	if sameAfter >= sameBefore || bd["rejected"] != -30 {
		t.Errorf("same request: salience %d → %d (breakdown %v), want 30 lower", sameBefore, sameAfter, bd)
	}
	if otherAfter, _ := salience(other); otherAfter != otherBefore {
		t.Errorf("another request: salience %d → %d, want unchanged", otherBefore, otherAfter)
	}
	// The same actor's second word on the card for the same request is a
	// repeat: recorded, counted nowhere.
	again, err := h.Adoption().Adopt(ctx, adoption.Request{Signal: "used", CardID: id, RequestID: p.RequestID, Note: "it did apply after all"})
	if err != nil || !again.Written || again.Counts || !strings.Contains(again.NotCounted, "a repeat") {
		t.Fatalf("repeat: %+v, %v; want written and not counted", again, err)
	}
	if s, _ := salience(dry); s != sameAfter {
		t.Errorf("after a repeat: salience %d, want %d", s, sameAfter)
	}
	// Another actor's used signal for the same request makes up for it in part.
	h2, err := host.Open(ctx, host.Options{Home: e.home, Cwd: dir, Mode: host.Human, Actor: "reviewer", Now: func() time.Time { return e.now }})
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Close()
	if res, err := h2.Adoption().Adopt(ctx, adoption.Request{Signal: "used", CardID: id, RequestID: p.RequestID, Note: "it did apply after all"}); err != nil || !res.Counts {
		t.Fatalf("another actor's signal: %+v, %v", res, err)
	}
	if s, bd := salience(dry); s != sameAfter+12 || bd["adopted"] != 12 {
		t.Errorf("after used: salience %d (breakdown %v), want %d", s, bd, sameAfter+12)
	}

	gateAfter, err := h.Gate(ctx, id, host.GateRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if gateAfter.Allow != gateBefore.Allow || gateAfter.Counts != gateBefore.Counts {
		t.Errorf("gate changed with signals: %+v → %+v", gateBefore, gateAfter)
	}
	cards, err := h.ListCards(ctx, host.CardFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cards {
		if c.Status != "promoted" {
			t.Errorf("%s is %s after signals", c.ID, c.Status)
		}
	}
}
