package store

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// QueueRequest records one context request's outcomes (and its terms,
// when given) without making the request wait for a write: the record is
// checked and coded now (an unknown outcome is ErrBadOutcome, an unknown
// card ErrNotFound, and nothing is queued), then written in the background
// with the records queued beside it, in one transaction that also folds
// them into the rollups when FoldEvery records wait unfolded: as soon as
// FoldEvery records are queued, else flushAfter after the first of them,
// and at FlushRecords and Close. A write whose records cross a multiple of
// PruneEvery also drops up to PruneStep raw records older than
// pruneBefore ("" = keep all).
//
// A request used to write its record itself, and a write waits for the
// write lock: behind another agent's write, and in a long-running server
// behind the fold of the records before it. Every commit also empties the
// page cache of every other connection to the database, so a write per
// request made the next request's reads start cold; batched, that happens
// once per batch. Nothing is lost by queueing: this process's
// InjectionSummaries counts queued records as it counts unfolded ones, the
// other readers of telemetry write the queue first, and Close writes what
// is left (reporting a write that kept failing). Other processes see a
// long-running process's records at most flushAfter late.
func (s *Store) QueueRequest(ctx context.Context, events []InjectionEvent, terms *RequestTerms, pruneBefore string) error {
	if len(events) == 0 {
		return nil
	}
	var ids []string
	kept := make([]InjectionEvent, 0, len(events))
	for _, ev := range events {
		if ev.Outcome != OutcomeSkippedScope {
			ids = append(ids, ev.CardID)
			kept = append(kept, ev)
		}
	}
	rowids, err := s.cardRowIDs(ctx, ids)
	if err != nil {
		return fmt.Errorf("record injections: %w", err)
	}
	blob, scope, err := encodeRequest(events, rowids)
	if err != nil {
		return fmt.Errorf("record injection request %s: %w", events[0].RequestID, err)
	}
	r := &queuedRecord{requestID: events[0].RequestID, createdAt: events[0].CreatedAt, blob: blob, scopeSkipped: scope,
		events: kept, terms: terms, pruneBefore: pruneBefore}
	return s.records.add(ctx, s, r)
}

// PruneEvery and PruneStep pace retention during normal use: a written
// record whose number is a multiple of PruneEvery also deletes up to
// PruneStep records older than the window, so a palace in steady use never
// grows its raw telemetry past the window and no single write pays for a
// large delete.
const (
	PruneEvery = 64
	PruneStep  = 256
)

// queueMax bounds the records waiting to be written: a request that finds
// the queue full waits for it to be written, so a writer that cannot keep
// up (another process holding the database) slows requests down instead of
// growing memory.
const queueMax = 1024

// flushAfter is how long a record may wait for others to be written with.
const flushAfter = time.Second

// queuedRecord is a request record waiting to be written.
type queuedRecord struct {
	requestID, createdAt string
	blob                 []byte
	scopeSkipped         int
	events               []InjectionEvent // skipped_scope left out
	terms                *RequestTerms
	pruneBefore          string
}

// recordQueue holds the records waiting to be written. Readers that count
// them (see withQueued) need to know, for the records they read from the
// database, whether a commit moved records from the queue to the database
// meanwhile: gen is odd while a commit of queued records is under way and
// grows with every commit, and commitMu lets a reader that kept meeting
// commits hold the next one off.
type recordQueue struct {
	mu       sync.Mutex
	waiting  []*queuedRecord
	gen      uint64
	running  bool
	timer    *time.Timer // armed while records wait for flushAfter
	err      error       // the last write's failure; cleared by the next write that succeeds
	changed  *sync.Cond
	commitMu sync.RWMutex
}

func (q *recordQueue) cond() *sync.Cond {
	if q.changed == nil {
		q.changed = sync.NewCond(&q.mu)
	}
	return q.changed
}

// add queues r and starts the writer unless it runs.
func (q *recordQueue) add(ctx context.Context, s *Store, r *queuedRecord) error {
	q.mu.Lock()
	full := len(q.waiting) >= queueMax
	q.mu.Unlock()
	if full {
		if err := s.FlushRecords(); err != nil {
			return fmt.Errorf("record injection request %s: earlier records could not be written: %w", r.requestID, err)
		}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("record injection request %s: %w", r.requestID, err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.waiting = append(q.waiting, r)
	switch {
	case q.running:
	case len(q.waiting) >= FoldEvery:
		q.running = true
		go q.run(s, false)
	case q.timer == nil:
		q.timer = time.AfterFunc(flushAfter, func() { q.flushLater(s) })
	}
	return nil
}

// flushLater writes what waits when flushAfter has passed.
func (q *recordQueue) flushLater(s *Store) {
	q.mu.Lock()
	q.timer = nil
	if q.running || len(q.waiting) == 0 {
		q.mu.Unlock()
		return
	}
	q.running = true
	q.mu.Unlock()
	q.run(s, true)
}

// run writes the waiting records, everything queued by the time a write
// begins in one transaction, until fewer than FoldEvery wait (none, with
// all) or a write fails (the records stay queued for the next add or
// FlushRecords). Records left waiting arm the timer.
func (q *recordQueue) run(s *Store, all bool) {
	for {
		q.mu.Lock()
		batch := q.waiting[:len(q.waiting):len(q.waiting)]
		if len(batch) == 0 || !all && len(batch) < FoldEvery {
			if len(batch) > 0 && q.timer == nil {
				q.timer = time.AfterFunc(flushAfter, func() { q.flushLater(s) })
			}
			q.running = false
			q.cond().Broadcast()
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()
		err := s.writeQueued(batch)
		if err != nil {
			q.mu.Lock()
			q.err = err
			q.running = false
			q.cond().Broadcast()
			q.mu.Unlock()
			return
		}
	}
}

// writeQueued writes batch (the oldest waiting records) in one
// transaction that folds the unfolded records when FoldEvery wait, takes
// them off the queue as it commits, then prunes when due.
func (s *Store) writeQueued(batch []*queuedRecord) error {
	// Not a request's context: the request has returned.
	ctx := context.Background()
	q := &s.records
	var first, last int64
	pruneBefore := ""
	var sums rollups
	for _, r := range batch {
		for _, ev := range r.events {
			sums.add(ev.CardID, ev.Outcome, r.createdAt)
		}
	}
	err := s.Tx(ctx, func(tx *Tx) error {
		for _, r := range batch {
			res, err := tx.exec(ctx, `INSERT INTO injection_requests(request_id, created_at, cards, scope_skipped) VALUES (?,?,?,?)`,
				r.requestID, r.createdAt, r.blob, r.scopeSkipped)
			if err != nil {
				return fmt.Errorf("record injection request %s: %w", r.requestID, err)
			}
			if last, err = res.LastInsertId(); err != nil {
				return fmt.Errorf("record injection request %s: %w", r.requestID, err)
			}
			if first == 0 {
				first = last
			}
			if r.terms != nil {
				if err := tx.recordRequestTerms(ctx, *r.terms); err != nil {
					return err
				}
			}
			pruneBefore = r.pruneBefore
		}
		if err := tx.fold(ctx, first, last, &sums, false); err != nil {
			return err
		}
		tx.commitHooks(q.beginCommit, func(ok bool) { q.endCommit(len(batch), ok) })
		return nil
	})
	if err != nil {
		return err
	}
	if pruneBefore != "" && last/PruneEvery > (first-1)/PruneEvery {
		// Best effort: a failure loses nothing (the records stay for the
		// next prune or `palace maintenance`).
		_, _ = s.PruneTelemetry(ctx, pruneBefore, PruneStep)
	}
	q.mu.Lock()
	q.err = nil
	q.mu.Unlock()
	return nil
}

// beginCommit and endCommit bracket the commit of n queued records: a
// reader that overlaps it sees gen change and reads again.
func (q *recordQueue) beginCommit() {
	q.commitMu.Lock()
	q.mu.Lock()
	q.gen++
	q.mu.Unlock()
}

func (q *recordQueue) endCommit(n int, ok bool) {
	q.mu.Lock()
	if ok {
		q.waiting = append([]*queuedRecord(nil), q.waiting[n:]...)
	}
	q.gen++
	q.cond().Broadcast()
	q.mu.Unlock()
	q.commitMu.Unlock()
}

// snapshot returns the waiting records and the generation they belong to,
// after any commit under way.
func (q *recordQueue) snapshot() ([]*queuedRecord, uint64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.gen%2 == 1 {
		q.cond().Wait()
	}
	return q.waiting[:len(q.waiting):len(q.waiting)], q.gen
}

func (q *recordQueue) generation() uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.gen
}

// withQueued runs read, a read of the database, and returns the records
// that were queued and not in the database as read saw it: every record
// is then counted once, either by read or from the queue. A commit of
// queued records during read means read runs again; after two such
// retries the next commit waits for the read.
func (q *recordQueue) withQueued(read func() error) ([]*queuedRecord, error) {
	for try := 0; ; try++ {
		if try == 2 {
			q.commitMu.RLock()
			queued, _ := q.snapshot()
			err := read()
			q.commitMu.RUnlock()
			return queued, err
		}
		queued, gen := q.snapshot()
		if err := read(); err != nil {
			return nil, err
		}
		if q.generation() == gen {
			return queued, nil
		}
	}
}

// FlushRecords waits until the queued request records are written (writing
// them itself when no writer runs) and returns the failure of a write that
// left records queued. Readers of raw telemetry call it first, and Close.
func (s *Store) FlushRecords() error {
	q := &s.records
	q.mu.Lock()
	for q.running {
		q.cond().Wait()
	}
	if q.timer != nil {
		q.timer.Stop()
		q.timer = nil
	}
	if len(q.waiting) == 0 {
		q.mu.Unlock()
		return nil
	}
	q.running = true
	q.mu.Unlock()
	q.run(s, true)
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.running { // a request queued another record meanwhile
		q.cond().Wait()
	}
	if len(q.waiting) > 0 && q.err != nil {
		return fmt.Errorf("write %d queued injection requests: %w", len(q.waiting), q.err)
	}
	return nil
}

// settleQueued writes the queued records before a read that does not count
// them itself. A write that fails leaves them queued for Close to report;
// the read goes on with what is written.
func (s *Store) settleQueued() {
	_ = s.FlushRecords()
}
