package pack_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/internal/jobtest"
	"github.com/palacehq/palace/host/pack"
)

// TestContextMarksStaleCards: a card whose review date passed, and one
// whose cited code changed, still render, with the warning and the repair,
// and lose StalePenalty salience against a fresh card; an expired card is
// left out and counted. StaleOf answers the same for cards shown outside
// a pack.
func TestContextMarksStaleCards(t *testing.T) {
	ctx := context.Background()
	fx := newFixture(t, jobtest.Options{Git: true})
	src := filepath.Join(fx.Dir, "store", "db.go")
	if err := os.MkdirAll(filepath.Dir(src), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(src, []byte("package store\n\nfunc Open() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	jobtest.Git(t, fx.Dir, "add", "-A")
	jobtest.Git(t, fx.Dir, "commit", "-q", "-m", "store")

	fresh := fx.card(t, scoped("fresh: close rows before the next query", domain.TierShu))
	due := scoped("due: vacuum after a bulk delete", domain.TierShu)
	due.reviewAfter = "2026-03-01T00:00:00.000Z" // the day before the fixture's clock
	dueID := fx.card(t, due)
	code := fx.card(t, scoped("code: Open sets the busy timeout", domain.TierShu))
	fx.link(t, code, domain.RoleSupporting, fx.record(t, ev{content: "Open sets busy_timeout", field: "storage", source: "store/db.go:3"}))
	gone := scoped("expired: the importer runs nightly", domain.TierShu)
	gone.expiresAt = "2026-03-01T00:00:00.000Z"
	expired := fx.card(t, gone)

	p := fx.context(t, scopedRequest())
	f, _ := item(p, fresh)
	if f.Stale != nil || f.SalienceBreakdown["stale"] != 0 {
		t.Errorf("the fresh card is marked stale: %+v", f.Stale)
	}
	if c, _ := item(p, code); c.Stale != nil {
		t.Errorf("the code card is stale before its code changed: %+v", c.Stale)
	}
	d, ok := item(p, dueID)
	if !ok || d.Stale == nil || d.Stale.ReviewDue != due.reviewAfter || d.SalienceBreakdown["stale"] != -pack.StalePenalty {
		t.Fatalf("the card past its review date: %+v", d)
	}
	if d.Salience >= f.Salience {
		t.Errorf("stale salience %d, fresh %d: the stale card does not lose", d.Salience, f.Salience)
	}
	if !strings.Contains(p.Rendered, "**stale**: review was due 2026-03-01") || strings.Contains(p.Rendered, "palace verify "+dueID) {
		t.Errorf("the review warning does not render as a date:\n%s", p.Rendered)
	}
	if _, ok := item(p, expired); ok || p.MemoryExists.Expired != 1 {
		t.Errorf("the expired card is shown (%v) or not counted (expired = %d)", ok, p.MemoryExists.Expired)
	}

	// The cited code changes: the card is stale with the file named and
	// the repair said.
	if err := os.WriteFile(src, []byte("package store\n\nfunc Open() { busyTimeout(5000) }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p = fx.context(t, scopedRequest())
	c, _ := item(p, code)
	if c.Stale == nil || len(c.Stale.Citations) != 1 || !strings.Contains(c.Stale.Reason, "store/db.go") {
		t.Fatalf("the card whose code changed: stale %+v", c.Stale)
	}
	if !strings.Contains(p.Rendered, "re-verify (`palace verify "+code+"`) or demote") {
		t.Errorf("the code warning lacks the repair:\n%s", p.Rendered)
	}

	got, err := fx.pl.StaleOf(ctx, []pack.TriggerCard{{ID: fresh}, {ID: dueID, ReviewAfter: due.reviewAfter}, {ID: code}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[dueID] == nil || got[code] == nil || got[fresh] != nil {
		t.Errorf("StaleOf = %v, want the due and the code card only", got)
	}
}
