package store_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/store"
)

func open(t *testing.T) (*store.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "palace.db")
	s, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

const now = "2026-01-02T03:04:05.000Z"

func seed(t *testing.T, s *store.Store) {
	t.Helper()
	ctx := context.Background()
	err := s.Tx(ctx, func(tx *store.Tx) error {
		if _, err := tx.EnsureAnchor(ctx, store.Anchor{ID: "an_g", Kind: "global", Identity: "global", CreatedAt: now}); err != nil {
			return err
		}
		if err := tx.InsertEvidence(ctx, domain.Evidence{ID: "ev_1", Content: "sqlite needs WAL for readers", Domain: "project",
			Field: "storage", Provenance: "runtime", AnchorID: "an_g", ContentSHA256: "x", Actor: "a", ActorType: "human", CreatedAt: now}); err != nil {
			return err
		}
		return tx.InsertCard(ctx, domain.Card{ID: "kc_1", Statement: "Use WAL", StatementNorm: "use wal", Tier: "qi",
			Status: "candidate", Domain: "project", Field: "storage", AnchorID: "an_g", Persistence: "standard",
			RenderPref: "auto", CreatedBy: "a", CreatedAt: now, UpdatedAt: now})
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestOpenSetsPragmasAndVersion(t *testing.T) {
	s, _ := open(t)
	v, err := s.Version(context.Background())
	if err != nil || v != store.SchemaVersion {
		t.Fatalf("version = %d, %v; want %d", v, err, store.SchemaVersion)
	}
	ok, err := s.IntegrityCheck(context.Background())
	if err != nil || len(ok) != 1 || ok[0] != "ok" {
		t.Fatalf("integrity = %v, %v", ok, err)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	s, path := open(t)
	seed(t, s)
	// Simulate a newer palace having written the file.
	if err := s.Tx(context.Background(), func(tx *store.Tx) error { return tx.ExecForTest(context.Background(), "PRAGMA user_version = 99") }); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err := store.Open(context.Background(), path)
	if !errors.Is(err, store.ErrSchemaTooNew) {
		t.Fatalf("err = %v, want ErrSchemaTooNew", err)
	}
	for _, want := range []string{"version 99", fmt.Sprintf("up to version %d", store.SchemaVersion)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
}

func TestAppendOnlyTriggers(t *testing.T) {
	s, _ := open(t)
	seed(t, s)
	ctx := context.Background()
	for _, q := range []string{
		"UPDATE evidence SET content = 'changed' WHERE id = 'ev_1'",
		"DELETE FROM evidence WHERE id = 'ev_1'",
		"DELETE FROM cards WHERE id = 'kc_1'",
	} {
		err := s.Tx(ctx, func(tx *store.Tx) error { return tx.ExecForTest(ctx, q) })
		if err == nil || !store.IsConstraint(err) {
			t.Errorf("%s: err = %v, want constraint error", q, err)
		}
	}
	err := s.Tx(ctx, func(tx *store.Tx) error {
		if _, err := tx.AppendEvent(ctx, domain.Event{ID: "ke_1", CardID: "kc_1", Type: "created", Actor: "a", ActorType: "human", CreatedAt: now}); err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"UPDATE card_events SET reason = 'x'", "DELETE FROM card_events"} {
		err := s.Tx(ctx, func(tx *store.Tx) error { return tx.ExecForTest(ctx, q) })
		if err == nil {
			t.Errorf("%s succeeded on an append-only table", q)
		}
	}
}

func TestEnumChecks(t *testing.T) {
	s, _ := open(t)
	seed(t, s)
	ctx := context.Background()
	base := domain.Card{ID: "kc_2", Statement: "x", StatementNorm: "x", Tier: "qi", Status: "candidate", Domain: "project",
		Field: "general", AnchorID: "an_g", Persistence: "standard", RenderPref: "auto", CreatedBy: "a", CreatedAt: now, UpdatedAt: now}
	bad := map[string]func(c *domain.Card){
		"tier":        func(c *domain.Card) { c.Tier = "law" },
		"status":      func(c *domain.Card) { c.Status = "approved" },
		"domain":      func(c *domain.Card) { c.Domain = "team" },
		"persistence": func(c *domain.Card) { c.Persistence = "forever" },
		"render_pref": func(c *domain.Card) { c.RenderPref = "loud" },
		"statement":   func(c *domain.Card) { c.Statement = strings.Repeat("x", 281) },
	}
	for name, mutate := range bad {
		c := base
		mutate(&c)
		err := s.Tx(ctx, func(tx *store.Tx) error { return tx.InsertCard(ctx, c) })
		if !store.IsConstraint(err) {
			t.Errorf("%s: err = %v, want constraint violation", name, err)
		}
	}
	err := s.Tx(ctx, func(tx *store.Tx) error {
		_, err := tx.InsertLink(ctx, domain.Link{CardID: "kc_1", EvidenceID: "ev_1", Role: "friend", CreatedAt: now})
		return err
	})
	if !store.IsConstraint(err) {
		t.Errorf("bad role: err = %v", err)
	}
	err = s.Tx(ctx, func(tx *store.Tx) error {
		_, err := tx.InsertLink(ctx, domain.Link{CardID: "kc_1", EvidenceID: "kc_1", Role: "supporting", CreatedAt: now})
		return err
	})
	if !store.IsConstraint(err) {
		t.Errorf("link to a card id: err = %v, want foreign key violation", err)
	}
}

func TestConditionalStatusUpdate(t *testing.T) {
	s, _ := open(t)
	seed(t, s)
	ctx := context.Background()
	if err := s.Tx(ctx, func(tx *store.Tx) error { return tx.SetCardStatus(ctx, "kc_1", "candidate", "promoted", now) }); err != nil {
		t.Fatal(err)
	}
	err := s.Tx(ctx, func(tx *store.Tx) error { return tx.SetCardStatus(ctx, "kc_1", "candidate", "promoted", now) })
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second move from candidate: err = %v, want ErrConflict", err)
	}
	c, err := s.Card(ctx, "kc_1")
	if err != nil || c.Status != "promoted" {
		t.Fatalf("card = %+v, %v", c, err)
	}
	if c.Scope.Paths == nil || c.Trigger.Intents == nil {
		t.Errorf("empty scope/trigger lists decode as nil: %+v %+v", c.Scope, c.Trigger)
	}
}

func TestRollbackOnError(t *testing.T) {
	s, _ := open(t)
	seed(t, s)
	ctx := context.Background()
	boom := errors.New("boom")
	err := s.Tx(ctx, func(tx *store.Tx) error {
		if err := tx.InsertEvidence(ctx, domain.Evidence{ID: "ev_2", Content: "y", Domain: "project", Field: "f",
			Provenance: "human", AnchorID: "an_g", ContentSHA256: "y", Actor: "a", ActorType: "human", CreatedAt: now}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if n, _ := s.CountEvidence(ctx); n != 1 {
		t.Fatalf("evidence rows = %d after rollback, want 1", n)
	}
}

func TestIDsSortByTime(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var ids []string
	for i := range 1000 {
		ids = append(ids, store.NewID("ev_", base.Add(time.Duration(i/10)*time.Millisecond)))
	}
	if !sort.StringsAreSorted(ids) {
		t.Fatal("ids made in order do not sort in order")
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("duplicate id %s", id)
		}
		seen[id] = true
		if len(id) != 3+26 {
			t.Fatalf("id %q has length %d", id, len(id))
		}
	}
}

// TestOpenSizesCacheAndMap checks that every pooled connection reads
// through the memory map and the larger page cache (see CacheSize).
func TestOpenSizesCacheAndMap(t *testing.T) {
	s, _ := open(t)
	for name, want := range map[string]int64{"mmap_size": store.MmapSize, "cache_size": -store.CacheSize / 1024} {
		if got, err := store.Pragma(s, name); err != nil || got != want {
			t.Errorf("PRAGMA %s = %d, %v; want %d", name, got, err, want)
		}
	}
}

// TestEvidenceSearch: evidence a transaction inserts joins the full-text
// index when it commits (one row or a batch), a rolled-back transaction
// leaves nothing behind, and query text is taken literally.
func TestEvidenceSearch(t *testing.T) {
	s, _ := open(t)
	seed(t, s)
	ctx := context.Background()
	ev := func(id, content, field string) domain.Evidence {
		return domain.Evidence{ID: id, Content: content, Domain: "project", Field: field, Provenance: "runtime",
			AnchorID: "an_g", ContentSHA256: id, Actor: "a", ActorType: "agent", CreatedAt: now}
	}
	if err := s.Tx(ctx, func(tx *store.Tx) error {
		for i, c := range []string{"checkpoint stalls under load", "WAL checkpoint ran", "busy timeout hit: database is locked"} {
			if err := tx.InsertEvidence(ctx, ev(fmt.Sprintf("ev_b%d", i), c, "storage")); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Tx(ctx, func(tx *store.Tx) error {
		return tx.InsertEvidence(ctx, ev("ev_c", "checkpoint docs read", "docs"))
	}); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if err := s.Tx(ctx, func(tx *store.Tx) error {
		if err := tx.InsertEvidence(ctx, ev("ev_r", "checkpoint rolled back", "storage")); err != nil {
			return err
		}
		return boom
	}); !errors.Is(err, boom) {
		t.Fatal(err)
	}
	tests := []struct {
		f    store.EvidenceFilter
		want []string
	}{
		{store.EvidenceFilter{Query: "checkpoint"}, []string{"ev_b0", "ev_b1", "ev_c"}},
		{store.EvidenceFilter{Query: "checkpoint", Field: "storage"}, []string{"ev_b0", "ev_b1"}},
		{store.EvidenceFilter{Query: "WAL checkpoint"}, []string{"ev_b1"}},
		{store.EvidenceFilter{Query: "database is locked"}, []string{"ev_b2"}},
		{store.EvidenceFilter{Query: `locked" OR "wal`}, nil},
		{store.EvidenceFilter{Query: "checkpoint* -docs"}, []string{"ev_c"}},
		{store.EvidenceFilter{Query: "checkpoint", AnchorIDs: []string{"an_other"}}, nil},
		{store.EvidenceFilter{Query: "***"}, nil},
	}
	for _, tt := range tests {
		got, total, err := s.ListEvidence(ctx, tt.f)
		if err != nil {
			t.Fatalf("%+v: %v", tt.f, err)
		}
		var ids []string
		for _, e := range got {
			ids = append(ids, e.ID)
		}
		sort.Strings(ids)
		if fmt.Sprint(ids) != fmt.Sprint(tt.want) || total != len(tt.want) {
			t.Errorf("%+v: got %v (total %d), want %v", tt.f, ids, total, tt.want)
		}
	}
}

// TestConcurrentCreate opens one fresh file from several connections at
// once, as an editor's language server, an agent's MCP server and a CLI
// command do on a new machine: every open must succeed (a database being
// created answers SQLITE_BUSY without waiting) and the schema is migrated
// once.
func TestConcurrentCreate(t *testing.T) {
	for trial := range 40 {
		path := filepath.Join(t.TempDir(), "palace.db")
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s, err := store.Open(context.Background(), path)
				if err == nil {
					s.Close()
				}
				errs[i] = err
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatalf("trial %d: %v", trial, err)
			}
		}
		s, err := store.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := s.Version(context.Background()); v != store.SchemaVersion {
			t.Fatalf("trial %d: schema version %d", trial, v)
		}
		s.Close()
	}
}
