package store_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/palacehq/palace/store"
)

// TestFoldedReadsMatch records one random history request by request in
// one store, so that up to FoldEvery-1 records wait unfolded at any time,
// and folded at once in another, and checks after every request that both
// read the same counts and newest times (InjectionSummaries with windows
// on several days, InjectionStats windowed and all-time) and that the
// first store's rollups took every record but the last few.
func TestFoldedReadsMatch(t *testing.T) {
	ctx := context.Background()
	a, _, b, _ := seededPair(t)
	cards, groups, applied := historyCards, historyGroups, historyApplied
	rng := rand.New(rand.NewPCG(5, 9))
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := start
	n := 3*store.FoldEvery + 5
	for i := range n {
		at = at.Add(time.Duration(rng.IntN(3*24*60)) * time.Minute)
		req := randomRequest(rng, i, at)
		if _, err := a.RecordInjections(ctx, req); err != nil {
			t.Fatal(err)
		}
		if _, err := b.RecordInjectionBatch(ctx, [][]store.InjectionEvent{req}); err != nil {
			t.Fatal(err)
		}
		for _, back := range []int{0, 1, 12, 29, 45} {
			since := store.FormatTime(at.AddDate(0, 0, -back))
			sa, err := a.InjectionSummaries(ctx, cards, since, groups, applied)
			if err != nil {
				t.Fatal(err)
			}
			sb, err := b.InjectionSummaries(ctx, cards, since, groups, applied)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(sa, sb) {
				t.Fatalf("after %d requests, since %s: summaries with unfolded records %v, folded %v", i+1, since, sa, sb)
			}
			for _, s := range []string{since, ""} {
				xa, err := a.InjectionStats(ctx, cards, s)
				if err != nil {
					t.Fatal(err)
				}
				xb, err := b.InjectionStats(ctx, cards, s)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(xa, xb) {
					t.Fatalf("after %d requests, since %q: stats with unfolded records %v, folded %v", i+1, s, xa, xb)
				}
			}
		}
	}
	if err := a.FlushRecords(); err != nil {
		t.Fatal(err)
	}
	rows, err := a.RowsForTest(ctx, `SELECT (SELECT max(seq) FROM injection_requests) - seq FROM injection_fold`)
	if err != nil {
		t.Fatal(err)
	}
	unfolded, _ := strconv.Atoi(rows[0][0])
	if unfolded < 0 || unfolded >= store.FoldEvery {
		t.Errorf("%d records unfolded after %d requests, want 0 to %d (the writes folded them)", unfolded, n, store.FoldEvery-1)
	}
	// Retention keeps unfolded records: their counts are nowhere else.
	if _, err := a.PruneTelemetry(ctx, store.FormatTime(at.Add(time.Hour)), 0); err != nil {
		t.Fatal(err)
	}
	if left, err := a.CountInjectionRequests(ctx, ""); err != nil || left != unfolded {
		t.Errorf("%d records left after pruning all, %v; want the %d unfolded", left, err, unfolded)
	}
	since := store.FormatTime(at.AddDate(0, 0, -29))
	sa, _ := a.InjectionSummaries(ctx, cards, since, groups, applied)
	sb, _ := b.InjectionSummaries(ctx, cards, since, groups, applied)
	if !reflect.DeepEqual(sa, sb) {
		t.Errorf("after pruning: summaries %v, want %v", sa, sb)
	}
}

// The cards, outcome groups and applied outcomes of the random histories
// the fold and queue tests record.
var (
	historyCards    = []string{"kc_1", "kc_2", "kc_3", "kc_4", "kc_5", "kc_6"}
	historyGroups   = [][]string{{"inline_full", "inline_compact"}, {"skipped_cooled"}, {"trimmed"}, {"viewed"}, {"ref_only"}}
	historyApplied  = []string{"inline_full", "inline_compact"}
	historyOutcomes = []string{"inline_full", "inline_compact", "ref_only", "trimmed", "skipped_cooled", "skipped_scope", "viewed"}
)

// randomRequest is request i of a random history at time at: each card
// with a random outcome or none, and a view of kc_1 when none had one.
func randomRequest(rng *rand.Rand, i int, at time.Time) []store.InjectionEvent {
	stamp := store.FormatTime(at)
	var req []store.InjectionEvent
	for _, c := range historyCards {
		if rng.IntN(3) > 0 {
			req = append(req, store.InjectionEvent{RequestID: "rq_" + strconv.Itoa(i), CardID: c, Outcome: historyOutcomes[rng.IntN(len(historyOutcomes))], CreatedAt: stamp})
		}
	}
	if len(req) == 0 {
		req = []store.InjectionEvent{{RequestID: "rq_" + strconv.Itoa(i), CardID: "kc_1", Outcome: "viewed", CreatedAt: stamp}}
	}
	return req
}

// TestWALBoundedAcrossProcesses opens, writes one request record and
// closes the store many times, as short-lived palace commands do, and
// checks that closing leaves the write-ahead log in place (no checkpoint
// at every close) but never longer than CheckpointPages plus one fold's
// pages, and that every record survives.
func TestWALBoundedAcrossProcesses(t *testing.T) {
	ctx := context.Background()
	s, path := open(t)
	contextSeed(t, s)
	s.Close()
	var maxWAL int64
	kept := false
	const requests = 5 * store.FoldEvery
	for i := range requests {
		s, err := store.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		stamp := store.FormatTime(time.Date(2026, 1, 1, 0, i, 0, 0, time.UTC))
		var req []store.InjectionEvent
		for _, c := range []string{"kc_1", "kc_2", "kc_3", "kc_4"} {
			req = append(req, store.InjectionEvent{RequestID: "rq_" + strconv.Itoa(i), CardID: c, Outcome: "trimmed", CreatedAt: stamp})
		}
		if _, err := s.RecordInjections(ctx, req); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path + "-wal")
		if err != nil {
			t.Fatalf("after close %d: %v (the log should stay)", i, err)
		}
		kept = kept || fi.Size() > 0
		maxWAL = max(maxWAL, fi.Size())
	}
	if !kept {
		t.Errorf("the log was empty after every close: closing checkpoints every time")
	}
	// A fold rewrites a few pages per card; on this small palace that is
	// a handful, so the log stays near the bound.
	if limit := int64(store.CheckpointPages+16) * (4096 + 24); maxWAL > limit {
		t.Errorf("log reached %d bytes, want at most %d", maxWAL, limit)
	}
	s, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st, err := s.InjectionStats(ctx, []string{"kc_1"}, "2026-01-01")
	if err != nil || st["kc_1"].Counts["trimmed"] != requests {
		t.Errorf("kc_1 trimmed = %v, %v; want %d", st["kc_1"], err, requests)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(path), "palace.db-journal")); err == nil {
		t.Errorf("a rollback journal exists: the database left WAL mode")
	}
}

// TestFoldMarkAfterClose: records written one at a time fold when
// FoldEvery wait, so after a short-lived process closes, the next opener
// finds the rollups and the mark where the last batch of FoldEvery ended.
func TestFoldMarkAfterClose(t *testing.T) {
	ctx := context.Background()
	s, path := open(t)
	contextSeed(t, s)
	const n = 2*store.FoldEvery + 3
	for i := range n {
		stamp := store.FormatTime(time.Date(2026, 1, 1, 0, i, 0, 0, time.UTC))
		req := []store.InjectionEvent{{RequestID: "rq_" + strconv.Itoa(i), CardID: "kc_1", Outcome: "inline_full", CreatedAt: stamp}}
		if _, err := s.RecordInjections(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rows, err := s.RowsForTest(ctx, `SELECT seq, (SELECT sum(n) FROM injection_daily WHERE card_id = 'kc_1') FROM injection_fold`)
	if err != nil {
		t.Fatal(err)
	}
	if want := strconv.Itoa(2 * store.FoldEvery); rows[0][0] != want || rows[0][1] != want {
		t.Errorf("after close: fold mark %s and %s events rolled up, want both %s", rows[0][0], rows[0][1], want)
	}
}

// TestTxQueueGivesUpWithItsContext: a write of this process waiting behind
// another one returns when its context ends instead of waiting on.
func TestTxQueueGivesUpWithItsContext(t *testing.T) {
	s, _ := open(t)
	held, release := make(chan struct{}), make(chan struct{})
	done := make(chan error)
	go func() {
		done <- s.Tx(context.Background(), func(*store.Tx) error {
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := s.Tx(ctx, func(*store.Tx) error { return nil })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a write queued behind another returned %v, want its context's deadline", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := s.Tx(context.Background(), func(*store.Tx) error { return nil }); err != nil {
		t.Errorf("after the first write committed: %v", err)
	}
}
