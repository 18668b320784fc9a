package host_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/store"
)

// TestViewCardWarmsTheCard: ViewCard (what `palace card show` calls)
// records one viewed event per call and the next pack counts it in the
// card's salience; ShowCard, the internal read, records nothing; an
// unknown id writes nothing.
func TestViewCardWarmsTheCard(t *testing.T) {
	ctx := context.Background()
	e := newCxEnv(t)
	h := e.open(e.repo("a", "https://github.com/acme/a"), host.Human)
	id := e.card(h, scoped("checkpoint the WAL after imports", "shu"))
	if _, err := h.ShowCard(ctx, id); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		c, err := h.ViewCard(ctx, id, false)
		if err != nil || c.ID != id || len(c.Links) == 0 {
			t.Fatalf("ViewCard = %+v, %v", c, err)
		}
	}
	if _, err := h.ViewCard(ctx, "kc_nope", false); host.KindOf(err) != host.KindInvalid {
		t.Errorf("unknown id: err = %v, want invalid", err)
	}
	if err := h.SettleTelemetry(); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, filepath.Join(e.home, "palace.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	stats, err := st.InjectionStats(ctx, []string{id, "kc_nope"}, "2000-01-01T00:00:00.000Z")
	if err != nil {
		t.Fatal(err)
	}
	if got := stats[id].Counts; len(got) != 1 || got["viewed"] != 2 {
		t.Errorf("events of %s = %v, want two views (ShowCard records none)", id, got)
	}
	if _, ok := stats["kc_nope"]; ok {
		t.Errorf("a view of an unknown card was recorded")
	}
	p, err := h.Pack().Context(ctx, cxScopedRequest())
	if err != nil {
		t.Fatal(err)
	}
	it, ok := item(p, id)
	if !ok || it.Counts30d.Viewed != 2 || it.SalienceBreakdown["viewed"] != 2 {
		t.Errorf("the pack does not count the views: %+v", it)
	}
}
