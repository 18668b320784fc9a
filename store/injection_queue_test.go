package store_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/store"
)

// TestQueuedReadsMatch queues a random history request by request in one
// store, whose writer commits the records while the test reads, and
// records it synchronously and folded in another; after every request
// both must read the same counts: a queued record is counted once,
// whether it was still queued, being committed or written when read.
// Readers and a flusher run beside the queue too, so reads overlap
// commits.
func TestQueuedReadsMatch(t *testing.T) {
	ctx := context.Background()
	a, _, b, _ := seededPair(t)
	cards, groups, applied := historyCards, historyGroups, historyApplied
	rng := rand.New(rand.NewPCG(7, 3))
	rng2 := rand.New(rand.NewPCG(1, 1))
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

	// Background readers: any answer must be a prefix of the history, so
	// its counts never exceed the final ones (checked at the end).
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var answers []map[string]store.InjectionSummary
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				s, err := a.InjectionSummaries(ctx, cards, "2000-01-01T00:00:00.000Z", groups, applied)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				answers = append(answers, s)
				mu.Unlock()
			}
		})
	}

	// And a flusher, so that commits land at any point of a read.
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := a.FlushRecords(); err != nil {
				t.Error(err)
				return
			}
			time.Sleep(time.Duration(rng2.IntN(500)) * time.Microsecond)
		}
	})
	stopReaders := sync.OnceFunc(func() { close(stop); wg.Wait() })
	defer stopReaders()
	n := 4*store.FoldEvery + 7
	for i := range n {
		at = at.Add(time.Duration(rng.IntN(2*24*60)) * time.Minute)
		req := randomRequest(rng, i, at)
		if err := a.QueueRequest(ctx, req, &store.RequestTerms{RequestID: "rq_" + strconv.Itoa(i), Terms: "x", CreatedAt: req[0].CreatedAt}, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := b.RecordInjectionBatch(ctx, [][]store.InjectionEvent{req}); err != nil {
			t.Fatal(err)
		}
		for _, back := range []int{0, 3, 29} {
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
				t.Fatalf("after %d requests, since %s: summaries with queued records %v, written and folded %v", i+1, since, sa, sb)
			}
		}
	}
	stopReaders()
	final, err := b.InjectionSummaries(ctx, cards, "2000-01-01T00:00:00.000Z", groups, applied)
	if err != nil {
		t.Fatal(err)
	}
	if len(answers) == 0 {
		t.Fatal("no read ran beside the writer")
	}
	for _, v := range answers {
		for id, s := range v {
			for g, c := range s.Counts {
				if c > final[id].Counts[g] {
					t.Errorf("a read beside the writer counted %d events of group %d for %s, more than the %d of the whole history", c, g, id, final[id].Counts[g])
				}
			}
		}
	}
	// The other readers wait for the queue: every record is there.
	if got, err := a.CountInjectionRequests(ctx, ""); err != nil || got != mustCount(t, b) {
		t.Errorf("%d records written, %v; want %d", got, err, mustCount(t, b))
	}
	if _, err := a.RequestTermsOf(ctx, "rq_0"); err != nil && !errors.Is(err, store.ErrNotFound) {
		t.Error(err)
	}
}

func mustCount(t *testing.T, s *store.Store) int {
	t.Helper()
	n, err := s.CountInjectionRequests(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestQueueDoesNotWaitForTheWriteLock: while another write of the process
// holds the database, a request's record is queued at once and counted by
// the next read; it is written when the lock is free.
func TestQueueDoesNotWaitForTheWriteLock(t *testing.T) {
	ctx := context.Background()
	s, _ := open(t)
	contextSeed(t, s)
	held, release := make(chan struct{}), make(chan struct{})
	done := make(chan error)
	go func() {
		done <- s.Tx(ctx, func(*store.Tx) error {
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	stamp := store.FormatTime(time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC))
	queued := make(chan error, 1)
	go func() {
		queued <- s.QueueRequest(ctx, []store.InjectionEvent{{RequestID: "rq_q", CardID: "kc_1", Outcome: "inline_full", CreatedAt: stamp}}, nil, "")
	}()
	select {
	case err := <-queued:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("QueueRequest waited for the write lock")
	}
	sums, err := s.InjectionSummaries(ctx, []string{"kc_1"}, "2026-01-01T00:00:00.000Z", [][]string{{"inline_full"}}, []string{"inline_full"})
	if err != nil {
		t.Fatal(err)
	}
	if got := sums["kc_1"]; len(got.Counts) != 1 || got.Counts[0] != 1 || got.Latest != stamp {
		t.Errorf("summary with the record queued = %+v, want one inline_full at %s", got, stamp)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := s.FlushRecords(); err != nil {
		t.Fatal(err)
	}
	if recs, err := s.InjectionRequests(ctx, "rq_q"); err != nil || len(recs) != 1 {
		t.Errorf("records of rq_q = %v, %v; want one", recs, err)
	}
}

// TestQueueRefusesBadRecords: an unknown card or outcome is refused when
// queued, and nothing is written.
func TestQueueRefusesBadRecords(t *testing.T) {
	ctx := context.Background()
	s, _ := open(t)
	contextSeed(t, s)
	stamp := store.FormatTime(time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC))
	err := s.QueueRequest(ctx, []store.InjectionEvent{{RequestID: "rq_x", CardID: "kc_nope", Outcome: "inline_full", CreatedAt: stamp}}, nil, "")
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown card: %v, want ErrNotFound", err)
	}
	err = s.QueueRequest(ctx, []store.InjectionEvent{{RequestID: "rq_x", CardID: "kc_1", Outcome: "adored", CreatedAt: stamp}}, nil, "")
	if !errors.Is(err, store.ErrBadOutcome) {
		t.Errorf("unknown outcome: %v, want ErrBadOutcome", err)
	}
	if n := mustCount(t, s); n != 0 {
		t.Errorf("%d records written, want none", n)
	}
}

// TestCloseWritesQueuedRecords: what is queued when the store closes is
// written, and a new handle reads it.
func TestCloseWritesQueuedRecords(t *testing.T) {
	ctx := context.Background()
	s, path := open(t)
	contextSeed(t, s)
	for i := range 40 {
		stamp := store.FormatTime(time.Date(2026, 1, 1, 0, i, 0, 0, time.UTC))
		if err := s.QueueRequest(ctx, []store.InjectionEvent{{RequestID: "rq_" + strconv.Itoa(i), CardID: "kc_2", Outcome: "trimmed", CreatedAt: stamp}}, nil, ""); err != nil {
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
	if n := mustCount(t, s); n != 40 {
		t.Errorf("%d records after close, want 40", n)
	}
}

// TestOtherProcessFoldsKeepReadsExact: a store that reads while another
// handle (another process, to it) writes and folds keeps its running
// counts across those folds, dropping the cards they changed, and reads
// what a store that wrote the same history synchronously reads.
func TestOtherProcessFoldsKeepReadsExact(t *testing.T) {
	ctx := context.Background()
	a, path, b, bPath := seededPair(t)
	reader, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	// A selection read teaches the reader its cards' rowids, as a context
	// request does before it reads their counts.
	if _, err := reader.CandidateTexts(ctx, store.CandidateQuery{AnchorIDs: []string{"an_a", "an_b", "an_g"}, Statuses: domain.Statuses}); err != nil {
		t.Fatal(err)
	}
	cards, groups, applied := historyCards, historyGroups, historyApplied
	rng := rand.New(rand.NewPCG(11, 5))
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// Only some requests touch kc_6, so a fold leaves its counts as they
	// were and the reader keeps them.
	for i := range 5*store.FoldEvery + 3 {
		at = at.Add(time.Duration(rng.IntN(2*24*60)) * time.Minute)
		req := randomRequest(rng, i, at)
		if i%5 != 0 {
			req = slices.DeleteFunc(req, func(ev store.InjectionEvent) bool { return ev.CardID == "kc_6" })
		}
		if len(req) == 0 {
			continue
		}
		if err := a.QueueRequest(ctx, req, nil, ""); err != nil {
			t.Fatal(err)
		}
		if err := a.FlushRecords(); err != nil {
			t.Fatal(err)
		}
		if _, err := b.RecordInjectionBatch(ctx, [][]store.InjectionEvent{req}); err != nil {
			t.Fatal(err)
		}
		for _, back := range []int{0, 29} {
			since := store.FormatTime(at.AddDate(0, 0, -back))
			got, err := reader.InjectionSummaries(ctx, cards, since, groups, applied)
			if err != nil {
				t.Fatal(err)
			}
			// A store opened for the read holds no counts yet.
			fresh, err := store.Open(ctx, bPath)
			if err != nil {
				t.Fatal(err)
			}
			want, err := fresh.InjectionSummaries(ctx, cards, since, groups, applied)
			fresh.Close()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("after %d requests, since %s: the reader has %v, a synchronous writer %v", i+1, since, got, want)
			}
		}
	}
}
