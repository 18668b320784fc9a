package store_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/store"
)

// seededPair opens two stores and seeds both with contextSeed: one
// history written two ways must read the same.
func seededPair(t *testing.T) (a *store.Store, aPath string, b *store.Store, bPath string) {
	t.Helper()
	a, aPath = open(t)
	b, bPath = open(t)
	contextSeed(t, a)
	contextSeed(t, b)
	return a, aPath, b, bPath
}

// contextSeed writes two anchors (an_a, an_b) under the global one, and
// cards and evidence at each, for the selection queries.
func contextSeed(t *testing.T, s *store.Store) {
	t.Helper()
	ctx := context.Background()
	err := s.Tx(ctx, func(tx *store.Tx) error {
		for _, a := range []store.Anchor{
			{ID: "an_g", Kind: "global", Identity: "global", CreatedAt: now},
			{ID: "an_a", Kind: "repo", ParentID: "an_g", Identity: "repo:a", CreatedAt: now},
			{ID: "an_b", Kind: "repo", ParentID: "an_g", Identity: "repo:b", CreatedAt: now},
		} {
			if _, err := tx.EnsureAnchor(ctx, a); err != nil {
				return err
			}
		}
		cards := []struct {
			id, anchor, status, tier, persistence, statement, expires string
		}{
			{"kc_1", "an_a", "promoted", "qi", "standard", "sqlite WAL mode for readers", ""},
			{"kc_2", "an_a", "canonical", "dao_ren", "standard", "review every migration", ""},
			{"kc_3", "an_a", "candidate", "shu", "standard", "sqlite vacuum weekly", ""},
			{"kc_4", "an_a", "retired", "qi", "standard", "sqlite old advice", ""},
			{"kc_5", "an_b", "promoted", "qi", "standard", "sqlite in repo b", ""},
			{"kc_6", "an_g", "promoted", "shu", "foundational", "never force-push", ""},
			{"kc_7", "an_a", "promoted", "qi", "standard", "expired sqlite tip", "2026-01-01T00:00:00.000Z"},
		}
		for _, c := range cards {
			if err := tx.InsertCard(ctx, domain.Card{ID: c.id, Statement: c.statement, StatementNorm: c.statement, Tier: domain.Tier(c.tier),
				Status: domain.Status(c.status), Domain: "project", Field: "storage", AnchorID: c.anchor, Persistence: domain.Persistence(c.persistence),
				RenderPref: "auto", ExpiresAt: c.expires, CreatedBy: "a", CreatedAt: now, UpdatedAt: now}); err != nil {
				return err
			}
		}
		for i := range 7 {
			field, anchor := "locks", "an_a"
			if i >= 5 {
				field, anchor = "locks", "an_b"
			}
			if err := tx.InsertEvidence(ctx, domain.Evidence{ID: fmt.Sprintf("ev_%d", i), Content: fmt.Sprintf("lock contention seen %d", i),
				Domain: "project", Field: field, Provenance: "runtime", AnchorID: anchor, ContentSHA256: "x", Actor: "a",
				ActorType: "agent", CreatedAt: fmt.Sprintf("2026-01-02T03:04:0%d.000Z", i)}); err != nil {
				return err
			}
		}
		_, err := tx.InsertLink(ctx, domain.Link{CardID: "kc_1", EvidenceID: "ev_0", Role: "supporting", CreatedAt: now})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestCandidates(t *testing.T) {
	s, _ := open(t)
	contextSeed(t, s)
	ctx := context.Background()
	base := store.CandidateQuery{
		AnchorIDs: []string{"an_a", "an_g"}, Statuses: []domain.Status{"promoted", "canonical"}, Now: "2026-02-01T00:00:00.000Z",
		Limit: 10, TierOrder: []domain.Tier{"dao_tian", "dao_ren", "shu", "qi"}, AnchorOrder: []string{"an_a", "an_g"},
		PersistenceOrder: []domain.Persistence{"foundational", "protected", "standard"},
	}
	tests := []struct {
		name        string
		mutate      func(q *store.CandidateQuery)
		wantMatched []string
		wantFill    []string
		wantCount   int
	}{
		{"no query: persistence, then tier, anchor, id; other repo, candidates, retired and expired left out",
			func(q *store.CandidateQuery) {}, nil, []string{"kc_6", "kc_2", "kc_1"}, 3},
		{"query ranks matches by bm25 within the same selection",
			func(q *store.CandidateQuery) { q.Match = `"sqlite"` }, []string{"kc_1"}, []string{"kc_6", "kc_2", "kc_1"}, 3},
		{"expired cards return without Now",
			func(q *store.CandidateQuery) { q.Now = "" }, nil, []string{"kc_6", "kc_2", "kc_1", "kc_7"}, 4},
		{"limit bounds each list",
			func(q *store.CandidateQuery) { q.Limit = 1; q.Match = `"sqlite" OR "migration"` }, []string{"kc_2"}, []string{"kc_6"}, 3},
		{"every anchor with an empty anchor list (the shorter statement ranks first)",
			func(q *store.CandidateQuery) { q.AnchorIDs = nil; q.Match = `"sqlite"` }, []string{"kc_5", "kc_1"}, []string{"kc_6", "kc_2", "kc_1", "kc_5"}, 4},
		{"candidates when asked",
			func(q *store.CandidateQuery) { q.Statuses = append(q.Statuses, "candidate") }, nil, []string{"kc_6", "kc_2", "kc_3", "kc_1"}, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := base
			q.Statuses = append([]domain.Status(nil), base.Statuses...)
			tt.mutate(&q)
			matched, fill, err := s.Candidates(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range matched {
				got = append(got, m.ID)
				if m.BM25 >= 0 {
					t.Errorf("bm25 of %s = %v, want negative (more relevant is lower)", m.ID, m.BM25)
				}
			}
			if !reflect.DeepEqual(got, tt.wantMatched) {
				t.Errorf("matched = %v, want %v", got, tt.wantMatched)
			}
			if !reflect.DeepEqual(fill, tt.wantFill) {
				t.Errorf("fill = %v, want %v", fill, tt.wantFill)
			}
			n, err := s.CountCandidates(ctx, q)
			if err != nil || n != tt.wantCount {
				t.Errorf("count = %d, %v; want %d", n, err, tt.wantCount)
			}
			// CandidateFill reads the same fill whole, with the count.
			cards, total, err := s.CandidateFill(ctx, q)
			var ids []string
			for _, c := range cards {
				ids = append(ids, c.ID)
				if c.Statement == "" || c.Scope.Paths == nil {
					t.Errorf("CandidateFill read %s partly: %+v", c.ID, c)
				}
			}
			if err != nil || !reflect.DeepEqual(ids, tt.wantFill) || total != tt.wantCount {
				t.Errorf("CandidateFill = %v, %d, %v; want %v, %d", ids, total, err, tt.wantFill, tt.wantCount)
			}
		})
	}
}

func TestCandidatesRejectsMissingStatuses(t *testing.T) {
	s, _ := open(t)
	if _, _, err := s.Candidates(context.Background(), store.CandidateQuery{Limit: 5}); err == nil {
		t.Fatal("no statuses: want an error, not every card")
	}
}

func TestCountMemoryAndFieldsWithoutCards(t *testing.T) {
	s, _ := open(t)
	contextSeed(t, s)
	ctx := context.Background()
	m, err := s.CountMemory(ctx, []string{"an_a", "an_g"}, []domain.Status{"promoted", "canonical"}, "2026-02-01T00:00:00.000Z")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"promoted": 3, "canonical": 1, "candidate": 1, "retired": 1}
	if !reflect.DeepEqual(m.CardsByStatus, want) || m.Expired != 1 || m.Evidence != 5 {
		t.Errorf("counts = %+v, want by status %v, 1 expired, 5 evidence", m, want)
	}
	// Counted again (from the cache): the expired count follows the time
	// asked about, and a change to the cards by anything shows at once.
	count := func(now string) store.MemoryCounts {
		t.Helper()
		m, err := s.CountMemory(ctx, []string{"an_a", "an_g"}, []domain.Status{"promoted", "canonical"}, now)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	if m := count("2000-01-01T00:00:00.000Z"); m.Expired != 0 || !reflect.DeepEqual(m.CardsByStatus, want) {
		t.Errorf("in 2000: %+v, want nothing expired", m)
	}
	if m := count("2026-02-01T00:00:00.000Z"); m.Expired != 1 {
		t.Errorf("again in 2026: %+v, want 1 expired", m)
	}
	exec := func(q string) {
		t.Helper()
		if err := s.Tx(ctx, func(tx *store.Tx) error { return tx.ExecForTest(ctx, q) }); err != nil {
			t.Fatal(err)
		}
	}
	exec(`UPDATE cards SET status = 'retired' WHERE id = (SELECT id FROM cards WHERE anchor_id = 'an_a' AND status = 'candidate' LIMIT 1)`)
	if m := count("2026-02-01T00:00:00.000Z"); m.CardsByStatus["candidate"] != 0 || m.CardsByStatus["retired"] != 2 {
		t.Errorf("after an update: %+v, want the candidate retired", m.CardsByStatus)
	}
	exec(`INSERT INTO cards(id, statement, statement_norm, content, tier, status, domain, field, anchor_id, scope, trigger, persistence, render_pref, created_by, created_at, updated_at, expires_at)
		SELECT 'kc_new', 'x', 'x', '', tier, 'promoted', domain, field, anchor_id, scope, trigger, persistence, render_pref, created_by, created_at, updated_at, '2026-01-15T00:00:00.000Z'
		FROM cards WHERE anchor_id = 'an_a' LIMIT 1`)
	if m := count("2026-02-01T00:00:00.000Z"); m.CardsByStatus["promoted"] != 4 || m.Expired != 2 {
		t.Errorf("after an insert: %+v, want 4 promoted and 2 expired", m)
	}
	// "locks" has 5 rows at an_a and no card in that field; "storage" cards
	// exist but no storage evidence does.
	got, err := s.FieldsWithoutCards(ctx, []string{"an_a", "an_g"}, []domain.Status{"promoted", "canonical"}, 5, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Field != "locks" || got[0].Evidence != 5 || !reflect.DeepEqual(got[0].Samples, []string{"ev_4", "ev_3", "ev_2"}) {
		t.Errorf("fields = %+v, want locks with 5 rows, samples ev_4, ev_3, ev_2", got)
	}
	got, err = s.FieldsWithoutCards(ctx, []string{"an_b"}, []domain.Status{"promoted", "canonical"}, 5, 3)
	if err != nil || len(got) != 0 {
		t.Errorf("an_b has 2 locks rows, under the minimum: got %+v, %v", got, err)
	}
}

func TestRecentEvidenceAndCitingCards(t *testing.T) {
	s, _ := open(t)
	contextSeed(t, s)
	ctx := context.Background()
	rows, err := s.RecentEvidence(ctx, []string{"an_a"}, "", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].ID != "ev_4" || rows[1].ID != "ev_3" {
		t.Fatalf("recent at an_a = %+v, want ev_4, ev_3 (an_b's ev_5, ev_6 are newer but elsewhere)", rows)
	}
	if rows, err := s.RecentEvidence(ctx, []string{"an_a", "an_b"}, "nope", 5); err != nil || len(rows) != 0 {
		t.Errorf("field filter: %+v, %v", rows, err)
	}
	cites, err := s.CitingCards(ctx, []string{"ev_0", "ev_1"}, []domain.Status{"promoted"})
	if err != nil || !reflect.DeepEqual(cites, map[string][]string{"ev_0": {"kc_1"}}) {
		t.Errorf("citing = %v, %v", cites, err)
	}
}

func TestInjectionStatsWindow(t *testing.T) {
	s, _ := open(t)
	contextSeed(t, s)
	ctx := context.Background()
	rows := []store.InjectionEvent{
		{RequestID: "rq_1", CardID: "kc_1", Outcome: "trimmed", CreatedAt: "2026-01-01T00:00:00.000Z"},
		{RequestID: "rq_2", CardID: "kc_1", Outcome: "trimmed", CreatedAt: "2026-01-20T00:00:00.000Z"},
		{RequestID: "rq_2", CardID: "kc_1", Outcome: "inline_full", CreatedAt: "2026-01-20T00:00:00.000Z"},
		{RequestID: "rq_3", CardID: "kc_1", Outcome: "inline_full", CreatedAt: "2026-01-25T00:00:00.000Z"},
		{RequestID: "rq_3", CardID: "kc_2", Outcome: "skipped_cooled", CreatedAt: "2026-01-25T00:00:00.000Z"},
	}
	record(t, s, rows...)
	st, err := s.InjectionStats(ctx, []string{"kc_1", "kc_2", "kc_6"}, "2026-01-10T00:00:00.000Z")
	if err != nil {
		t.Fatal(err)
	}
	if got := st["kc_1"]; got.Counts["trimmed"] != 1 || got.Counts["inline_full"] != 2 || got.Latest["inline_full"] != "2026-01-25T00:00:00.000Z" {
		t.Errorf("kc_1 = %+v, want 1 trimmed inside the window, 2 inline_full, latest 01-25", got)
	}
	if _, ok := st["kc_6"]; ok {
		t.Error("kc_6 has no events but got stats")
	}
	// All-time totals are kept for the applied outcomes only.
	all, err := s.InjectionStats(ctx, []string{"kc_1"}, "")
	if err != nil || all["kc_1"].Counts["inline_full"] != 2 || all["kc_1"].Counts["trimmed"] != 0 {
		t.Errorf("all time = %+v, %v; want 2 inline_full and no trimmed total", all, err)
	}
	if n, err := s.CountInjectionRequests(ctx, "rq_2"); err != nil || n != 1 {
		t.Errorf("rq_2 records = %d, %v; want 1", n, err)
	}
	bad := []store.InjectionEvent{{RequestID: "rq_4", CardID: "kc_1", Outcome: "loved", CreatedAt: now}}
	_, err = recordErr(s, bad)
	if !errors.Is(err, store.ErrBadOutcome) || !strings.Contains(err.Error(), "kc_1") {
		t.Errorf("unknown outcome: err = %v, want ErrBadOutcome naming the card", err)
	}
	unknown := []store.InjectionEvent{{RequestID: "rq_5", CardID: "kc_nope", Outcome: "trimmed", CreatedAt: now}}
	if _, err := recordErr(s, unknown); !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), "kc_nope") {
		t.Errorf("unknown card: err = %v, want ErrNotFound naming it", err)
	}
	if n, _ := s.CountInjectionRequests(ctx, ""); n != 3 {
		t.Errorf("%d records after two refused writes, want 3", n)
	}
}

// TestInjectionRollupBackfill takes a database back to schema 1 with raw
// injection events and no rollups, reopens it, and checks that the
// migrations counted the old events and evidence, turned the old events
// into request records, and that new records and evidence are counted.
func TestInjectionRollupBackfill(t *testing.T) {
	s, path := open(t)
	contextSeed(t, s)
	ctx := context.Background()
	err := s.Tx(ctx, func(tx *store.Tx) error {
		for _, q := range []string{
			"DROP TABLE injection_requests",
			`CREATE TABLE injection_events (request_id TEXT NOT NULL, card_id TEXT NOT NULL REFERENCES cards(id),
				outcome TEXT NOT NULL CHECK (outcome IN ('inline_full','inline_compact','ref_only','trimmed','skipped_cooled','skipped_scope','viewed')),
				created_at TEXT NOT NULL)`,
			"DROP TABLE injection_window", "DROP TABLE injection_daily",
			"CREATE INDEX injection_events_card_time ON injection_events(card_id, created_at)",
			"DROP INDEX cards_context", "DROP TRIGGER evidence_counts_insert", "DROP TABLE evidence_counts",
			"DROP INDEX card_links_card_time", "DROP INDEX evidence_anchor",
			"DROP INDEX evidence_sha", "DROP TABLE evidence_duplicates", "DROP TABLE card_contests",
			"DROP TRIGGER cards_text_changed", "DROP TABLE card_text_version",
			"CREATE TRIGGER evidence_fts_insert AFTER INSERT ON evidence BEGIN INSERT INTO evidence_fts(rowid, content) VALUES (new.rowid, new.content); END",
			"CREATE INDEX evidence_field ON evidence(field)",
			"DROP TRIGGER evidence_fts_redact", "DROP TRIGGER evidence_redactions_no_update",
			"DROP TRIGGER evidence_redactions_no_delete", "DROP TABLE evidence_redactions", "DROP TRIGGER evidence_no_update",
			"CREATE TRIGGER evidence_no_update BEFORE UPDATE ON evidence BEGIN SELECT RAISE(ABORT, 'evidence is append-only'); END",
			`INSERT INTO injection_events VALUES ('rq_1','kc_1','trimmed','2026-01-05T10:00:00.000Z'),
				('rq_2','kc_1','trimmed','2026-01-05T11:00:00.000Z'), ('rq_3','kc_1','inline_full','2026-01-06T09:00:00.000Z'),
				('rq_3','kc_2','skipped_scope','2026-01-06T09:00:00.000Z')`,
			"DROP TABLE adoption_events", "DROP TABLE request_terms",
			"PRAGMA user_version = 1",
		} {
			if err := tx.ExecForTest(ctx, q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	record(t, s, store.InjectionEvent{RequestID: "rq_4", CardID: "kc_1", Outcome: "trimmed", CreatedAt: "2026-01-06T12:00:00.000Z"})
	if recs, err := s.InjectionRequests(ctx, "rq_3"); err != nil || len(recs) != 1 || !reflect.DeepEqual(recs[0].Cards, map[string][]string{"inline_full": {"kc_1"}}) || recs[0].ScopeSkipped != 1 {
		t.Errorf("rq_3 converted = %+v, %v; want its inline_full of kc_1 and one card out of scope", recs, err)
	}
	tests := []struct {
		since      string
		trimmed    int
		latestTrim string
		inlineFull int
	}{
		{"", 0, "", 1}, // all-time totals of applied outcomes only
		{"2026-01-01T00:00:00.000Z", 3, "2026-01-06T12:00:00.000Z", 1},
		{"2026-01-06T08:00:00.000Z", 1, "2026-01-06T12:00:00.000Z", 1}, // whole UTC days
		{"2026-01-07T00:00:00.000Z", 0, "", 0},
	}
	m, err := s.CountMemory(ctx, []string{"an_a"}, nil, "")
	if err != nil || m.Evidence != 5 {
		t.Errorf("evidence at an_a after the backfill = %d, %v; want 5", m.Evidence, err)
	}
	ev := domain.Evidence{ID: "ev_9", Content: "one more", Domain: "project", Field: "locks", Provenance: "human", AnchorID: "an_a",
		ContentSHA256: "x", Actor: "a", ActorType: "human", CreatedAt: now}
	if err := s.Tx(ctx, func(tx *store.Tx) error { return tx.InsertEvidence(ctx, ev) }); err != nil {
		t.Fatal(err)
	}
	if m, _ := s.CountMemory(ctx, []string{"an_a"}, nil, ""); m.Evidence != 6 {
		t.Errorf("evidence at an_a after an insert = %d, want 6", m.Evidence)
	}
	for _, tt := range tests {
		st, err := s.InjectionStats(ctx, []string{"kc_1"}, tt.since)
		if err != nil {
			t.Fatal(err)
		}
		got := st["kc_1"]
		if got.Counts["trimmed"] != tt.trimmed || got.Latest["trimmed"] != tt.latestTrim || got.Counts["inline_full"] != tt.inlineFull {
			t.Errorf("since %q: %+v, want %d trimmed (latest %q), %d inline_full", tt.since, got, tt.trimmed, tt.latestTrim, tt.inlineFull)
		}
		if tt.since == "" {
			continue
		}
		// The running counts the migration built answer the same.
		sums, err := s.InjectionSummaries(ctx, []string{"kc_1"}, tt.since, [][]string{{"trimmed"}, {"inline_full"}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if c := sums["kc_1"].Counts; tt.trimmed+tt.inlineFull == 0 && c != nil || tt.trimmed+tt.inlineFull > 0 && (c == nil || c[0] != tt.trimmed || c[1] != tt.inlineFull) {
			t.Errorf("since %q: summaries %v, want %d trimmed and %d inline_full", tt.since, c, tt.trimmed, tt.inlineFull)
		}
	}
}
