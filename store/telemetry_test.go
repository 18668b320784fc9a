package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/palacehq/palace/store"
)

// record writes events as request records, one per request id and time.
func record(t *testing.T, s *store.Store, events ...store.InjectionEvent) {
	t.Helper()
	var group []store.InjectionEvent
	flush := func() {
		if _, err := recordErr(s, group); err != nil {
			t.Fatal(err)
		}
		group = nil
	}
	for _, ev := range events {
		if len(group) > 0 && (group[0].RequestID != ev.RequestID || group[0].CreatedAt != ev.CreatedAt) {
			flush()
		}
		group = append(group, ev)
	}
	flush()
}

func recordErr(s *store.Store, events []store.InjectionEvent) (int64, error) {
	return s.RecordInjections(context.Background(), events)
}

// legacyShape is the per-candidate telemetry as it was: a row per card and
// outcome, rolled up by a trigger. It lives in legacy_* tables next to the
// new ones so one history can be replayed through both.
var legacyShape = []string{
	`CREATE TABLE legacy_events (request_id TEXT NOT NULL, card_id TEXT NOT NULL, outcome TEXT NOT NULL, created_at TEXT NOT NULL)`,
	`CREATE TABLE legacy_daily (card_id TEXT NOT NULL, day TEXT NOT NULL, outcome TEXT NOT NULL, n INTEGER NOT NULL, last_at TEXT NOT NULL,
		PRIMARY KEY (card_id, day, outcome)) WITHOUT ROWID`,
	`CREATE TABLE legacy_last (card_id TEXT NOT NULL, outcome TEXT NOT NULL, total INTEGER NOT NULL, last_at TEXT NOT NULL,
		PRIMARY KEY (card_id, outcome)) WITHOUT ROWID`,
	`CREATE TRIGGER legacy_rollup AFTER INSERT ON legacy_events
	BEGIN
		INSERT INTO legacy_daily(card_id, day, outcome, n, last_at) VALUES (new.card_id, substr(new.created_at, 1, 10), new.outcome, 1, new.created_at)
			ON CONFLICT(card_id, day, outcome) DO UPDATE SET n = n + 1, last_at = max(last_at, excluded.last_at);
		INSERT INTO legacy_last(card_id, outcome, total, last_at) VALUES (new.card_id, new.outcome, 1, new.created_at)
			ON CONFLICT(card_id, outcome) DO UPDATE SET total = total + 1, last_at = max(last_at, excluded.last_at);
	END`,
}

// TestTelemetryDifferential replays one random request history through the
// old per-candidate rows (legacy_*) and through request records, and checks
// that the 30-day counts per outcome group and the newest applied event a
// pack's why-trace reports are the same for every card, on several days —
// and the same again after the raw records older than the window are
// pruned — and that each request's outcomes read back from its record.
func TestTelemetryDifferential(t *testing.T) {
	s, _ := open(t)
	contextSeed(t, s)
	ctx := context.Background()
	cards := []string{"kc_1", "kc_2", "kc_3", "kc_4", "kc_5", "kc_6"}
	outcomes := []string{"inline_full", "inline_compact", "ref_only", "trimmed", "skipped_cooled", "skipped_scope", "viewed"}
	rng := rand.New(rand.NewPCG(7, 7))
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var history [][]store.InjectionEvent
	at := start
	for i := range 400 {
		at = at.Add(time.Duration(rng.IntN(6*60)) * time.Minute)
		stamp := store.FormatTime(at)
		var req []store.InjectionEvent
		for _, c := range cards {
			if rng.IntN(4) > 0 {
				req = append(req, store.InjectionEvent{RequestID: "rq_" + strconv.Itoa(i), CardID: c, Outcome: outcomes[rng.IntN(len(outcomes))], CreatedAt: stamp})
			}
		}
		if len(req) > 0 {
			history = append(history, req)
		}
	}
	err := s.Tx(ctx, func(tx *store.Tx) error {
		for _, q := range legacyShape {
			if err := tx.ExecForTest(ctx, q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		for _, req := range history {
			for _, ev := range req {
				q := fmt.Sprintf("INSERT INTO legacy_events VALUES ('%s','%s','%s','%s')", ev.RequestID, ev.CardID, ev.Outcome, ev.CreatedAt)
				if err := tx.ExecForTest(ctx, q); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range history {
		record(t, s, req...)
	}
	groups := [][]string{{"inline_full", "inline_compact"}, {"skipped_cooled"}, {"trimmed"}, {"viewed"}}
	applied := []string{"inline_full", "inline_compact"}
	// legacy reads the old shape with the read cooling did before: sums per
	// group over whole UTC days from since's day, newest applied ever.
	legacy := func(since string) map[string]store.InjectionSummary {
		out := map[string]store.InjectionSummary{}
		rows, err := s.RowsForTest(ctx, `SELECT card_id, outcome, n, '' FROM legacy_daily WHERE day >= ?
			UNION ALL SELECT card_id, outcome, 0, last_at FROM legacy_last WHERE outcome IN ('inline_full','inline_compact')`, since[:10])
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			g := -1
			for i, os := range groups {
				for _, o := range os {
					if o == r[1] {
						g = i
					}
				}
			}
			if g < 0 && r[3] == "" {
				continue
			}
			sum, ok := out[r[0]]
			if !ok {
				sum.Counts = make([]int, len(groups))
			}
			if g >= 0 {
				n, _ := strconv.Atoi(r[2])
				sum.Counts[g] += n
			}
			sum.Latest = max(sum.Latest, r[3])
			out[r[0]] = sum
		}
		return out
	}
	check := func(label string) {
		for day := 10; day <= 100; day += 9 {
			now := start.AddDate(0, 0, day)
			since := store.FormatTime(now.Add(-30 * 24 * time.Hour))
			got, err := s.InjectionSummaries(ctx, cards, since, groups, applied)
			if err != nil {
				t.Fatal(err)
			}
			if want := legacy(since); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s, day %d: counts %+v\nold shape   %+v", label, day, got, want)
			}
		}
	}
	check("recorded")
	for _, req := range history[:20] {
		recs, err := s.InjectionRequests(ctx, req[0].RequestID)
		if err != nil || len(recs) != 1 {
			t.Fatalf("%s: %+v, %v", req[0].RequestID, recs, err)
		}
		want := map[string][]string{}
		scope := 0
		for _, ev := range req {
			if ev.Outcome == "skipped_scope" {
				scope++
				continue
			}
			want[ev.Outcome] = append(want[ev.Outcome], ev.CardID)
		}
		if !reflect.DeepEqual(recs[0].Cards, want) || recs[0].ScopeSkipped != scope {
			t.Errorf("%s read back as %+v, want %v and %d out of scope", req[0].RequestID, recs[0], want, scope)
		}
	}
	cutoff := store.FormatTime(at.Truncate(24*time.Hour).AddDate(0, 0, -30))
	pruned, err := s.PruneTelemetry(ctx, cutoff, 0)
	if err != nil || pruned == 0 {
		t.Fatalf("pruned %d, %v; want some records", pruned, err)
	}
	check("pruned")
	st, err := s.Telemetry(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.OldestDay < cutoff[:10] || st.Requests != len(history)-pruned || st.FileBytes == 0 || st.DailyRows == 0 {
		t.Errorf("telemetry after pruning before %s: %+v (history %d, pruned %d)", cutoff, st, len(history), pruned)
	}
	if n, err := s.PruneTelemetry(ctx, cutoff, 0); err != nil || n != 0 {
		t.Errorf("second prune deleted %d, %v; want 0", n, err)
	}
}

// TestTelemetryCompact checks that a vacuum keeps every card and its
// full-text index (which relies on rowids) and empties the write-ahead log.
func TestTelemetryCompact(t *testing.T) {
	s, _ := open(t)
	contextSeed(t, s)
	ctx := context.Background()
	before, err := s.RowsForTest(ctx, `SELECT rowid, id FROM cards ORDER BY rowid`)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Compact(ctx, true); err != nil {
		t.Fatal(err)
	}
	after, err := s.RowsForTest(ctx, `SELECT rowid, id FROM cards ORDER BY rowid`)
	if err != nil || !reflect.DeepEqual(before, after) {
		t.Errorf("cards after vacuum = %v, %v; want %v", after, err, before)
	}
	if rows, err := s.RowsForTest(ctx, `SELECT count(*) FROM cards_fts WHERE cards_fts MATCH 'wal'`); err != nil || rows[0][0] == "0" {
		t.Errorf("full-text search after vacuum: %v, %v", rows, err)
	}
	st, err := s.Telemetry(ctx)
	if err != nil || st.WALBytes != 0 {
		t.Errorf("after compact: %+v, %v; want an empty WAL", st, err)
	}
}

// TestInjectionWindowAnyOrder records one random history of ~120 days in
// shuffled batches (so days arrive out of order, some before a running
// count's base and some after it moved) and checks that the windowed counts
// agree, for many windows, with counting the daily rows directly.
func TestInjectionWindowAnyOrder(t *testing.T) {
	s, _ := open(t)
	contextSeed(t, s)
	ctx := context.Background()
	cards := []string{"kc_1", "kc_2", "kc_3", "kc_4", "kc_5", "kc_6"}
	outcomes := []string{"inline_full", "inline_compact", "ref_only", "trimmed", "skipped_cooled", "skipped_scope", "viewed"}
	rng := rand.New(rand.NewPCG(11, 3))
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var history [][]store.InjectionEvent
	for i := range 600 {
		stamp := store.FormatTime(start.Add(time.Duration(rng.IntN(120*24*60)) * time.Minute))
		var req []store.InjectionEvent
		for _, c := range cards {
			if rng.IntN(3) > 0 {
				req = append(req, store.InjectionEvent{RequestID: "rq_" + strconv.Itoa(i), CardID: c, Outcome: outcomes[rng.IntN(len(outcomes))], CreatedAt: stamp})
			}
		}
		history = append(history, req)
	}
	for len(history) > 0 {
		n := min(len(history), 1+rng.IntN(40))
		if _, err := s.RecordInjectionBatch(ctx, history[:n]); err != nil {
			t.Fatal(err)
		}
		history = history[n:]
	}
	groups := [][]string{{"inline_full", "inline_compact"}, {"skipped_cooled"}, {"trimmed"}, {"viewed"}, {"ref_only"}}
	for day := -5; day <= 130; day += 3 {
		since := store.FormatTime(start.AddDate(0, 0, day))
		got, err := s.InjectionSummaries(ctx, cards, since, groups, nil)
		if err != nil {
			t.Fatal(err)
		}
		direct, err := s.InjectionStats(ctx, cards, since)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cards {
			want := make([]int, len(groups))
			for i, g := range groups {
				for _, o := range g {
					want[i] += direct[c].Counts[o]
				}
			}
			if have := got[c].Counts; !reflect.DeepEqual(have, want) && !(have == nil && !slices.ContainsFunc(want, func(n int) bool { return n != 0 })) {
				t.Fatalf("since day %d, %s: window counts %v, daily rows %v", day, c, have, want)
			}
		}
	}
}
