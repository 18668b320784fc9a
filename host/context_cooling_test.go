package host_test

import (
	"context"
	"testing"
	"time"
)

// TestContextCoolingRecovers: a card trimmed by the budget request after
// request builds up trim counts, yet the next request about it inlines it
// (cooling never pushes out a card relevant to the current request), and
// its status never changes.
func TestContextCoolingRecovers(t *testing.T) {
	ctx := context.Background()
	e := newCxEnv(t)
	h := e.openClock(e.repo("a", "https://github.com/acme/a"))
	id := e.card(h, scoped("keep write transactions short", "shu"))
	req := cxScopedRequest()
	req.Query = "a long write transaction blocks the other writers"
	req.DryRun, req.Budget = false, 1
	for day := range 10 {
		e.now = cxEpoch.Add(time.Duration(day) * 24 * time.Hour)
		p, err := h.Pack().Context(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if it, ok := item(p, id); ok && it.Trimmed == nil {
			t.Fatalf("day %d: a budget of 1 character did not trim the card: %+v", day, it)
		}
	}
	req.Budget, req.Explain = 0, true
	p, err := h.Pack().Context(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	it, ok := item(p, id)
	if !ok || it.Counts30d.Trimmed < 10 || (it.RenderForm != "inline_compact" && it.RenderForm != "inline_full") {
		t.Fatalf("after 10 trims the relevant card is %+v, want inline", it)
	}
	c, err := h.ShowCard(ctx, id)
	if err != nil || c.Status != "promoted" {
		t.Fatalf("status %q %v, want promoted", c.Status, err)
	}
}
