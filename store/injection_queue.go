package store

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// QueueRequest records one context request's outcomes (and terms, when
// given) without waiting for a write: the record is checked and coded now
// (an unknown outcome is ErrBadOutcome, an unknown card ErrNotFound, and
// nothing is queued), then written in the background with its neighbours,
// at writeAt records, flushAfter after the first, or at FlushRecords and
// Close. Nothing is lost: this process's reads count queued records, other
// readers of telemetry flush first, and Close writes the rest.
func (s *Store) QueueRequest(ctx context.Context, events []InjectionEvent, terms *RequestTerms, pruneBefore string) error {
	_, err := s.queueRecord(ctx, events, terms, pruneBefore)
	return err
}

func (s *Store) queueRecord(ctx context.Context, events []InjectionEvent, terms *RequestTerms, pruneBefore string) (*queuedRecord, error) {
	if len(events) == 0 {
		return nil, nil
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
		return nil, fmt.Errorf("record injections: %w", err)
	}
	blob, scope, err := encodeRequest(events, rowids)
	if err != nil {
		return nil, fmt.Errorf("record injection request %s: %w", events[0].RequestID, err)
	}
	r := &queuedRecord{requestID: events[0].RequestID, createdAt: events[0].CreatedAt, blob: blob, scopeSkipped: scope,
		events: kept, terms: terms, pruneBefore: pruneBefore}
	if err := s.records.add(ctx, s, r); err != nil {
		return nil, err
	}
	return r, nil
}

// pruneEvery and pruneStep pace retention: a record whose number crosses a
// multiple of pruneEvery also deletes up to pruneStep records older than the
// window, so raw telemetry stays bounded without one large delete.
const (
	pruneEvery = 64
	pruneStep  = 256
)

// queueMax bounds the records waiting to be written: a request that finds
// the queue full waits for the write, rather than growing memory.
const queueMax = 1024

// flushAfter is how long a record may wait for others to be written with,
// and writeAt how many may wait before they are written at once.
const (
	flushAfter = time.Second
	writeAt    = 256
)

// queuedRecord is a request record waiting to be written.
type queuedRecord struct {
	requestID, createdAt string
	blob                 []byte
	scopeSkipped         int
	events               []InjectionEvent // skipped_scope left out
	terms                *RequestTerms
	pruneBefore          string
	// seq is the record's number once inserted, 0 before or after a rollback.
	seq atomic.Int64
}

// recordQueue holds the records waiting to be written; a record leaves it
// once its transaction committed.
type recordQueue struct {
	mu      sync.Mutex
	waiting []*queuedRecord
	running bool
	timer   *time.Timer // armed while records wait for flushAfter
	err     error       // the last write's failure; cleared by the next write that succeeds
	changed *sync.Cond
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
	case len(q.waiting) >= writeAt:
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

// run writes the waiting records, a transaction per round, until fewer than
// writeAt wait (none, with all) or a write fails, leaving them queued.
func (q *recordQueue) run(s *Store, all bool) {
	for {
		q.mu.Lock()
		batch := q.waiting[:len(q.waiting):len(q.waiting)]
		if len(batch) == 0 || !all && len(batch) < writeAt {
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

// writeQueued writes batch (the oldest waiting records) in one transaction
// that folds when due, takes them off the queue and prunes when due.
func (s *Store) writeQueued(batch []*queuedRecord) error {
	ctx := context.Background()
	q := &s.records
	var first, last int64
	pruneBefore := ""
	var sums rollups
	foldedFrom := int64(-1)
	for _, r := range batch {
		for _, ev := range r.events {
			sums.add(ev.CardID, ev.Outcome, r.createdAt)
		}
	}
	err := s.Tx(ctx, func(tx *Tx) error {
		for _, r := range batch {
			var err error
			if last, err = tx.insertRecord(ctx, r.requestID, r.createdAt, r.blob, r.scopeSkipped); err != nil {
				return err
			}
			r.seq.Store(last)
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
		var err error
		foldedFrom, err = tx.fold(ctx, first, last, &sums, false)
		return err
	})
	if err != nil {
		for _, r := range batch {
			r.seq.Store(0) // the numbers were rolled back
		}
		return err
	}
	if foldedFrom >= 0 {
		// Only the folded cards' running counts moved: drop and reread those
		// (best effort, off the requests' path).
		var held []string
		changed := map[string]bool{}
		for _, k := range sums.order {
			changed[k.card] = true
		}
		s.windows.Move(foldedFrom, last, func(id string) bool {
			if changed[id] {
				held = append(held, id)
			}
			return changed[id]
		})
		if len(held) > 0 && !s.closing.Load() {
			if rows, seq, _, stable, err := s.readWindowsOf(ctx, held); err == nil && stable {
				s.windows.PutMany(seq, held, func(id string) []windowRow { return rows[id] })
			}
		}
	}
	q.mu.Lock()
	q.waiting = append([]*queuedRecord(nil), q.waiting[len(batch):]...)
	q.mu.Unlock()
	if pruneBefore != "" && last/pruneEvery > (first-1)/pruneEvery {
		// Best effort: what is not pruned stays for the next prune.
		_, _ = s.PruneTelemetry(ctx, pruneBefore, pruneStep)
	}
	q.mu.Lock()
	q.err = nil
	q.mu.Unlock()
	return nil
}

// snapshot returns the records waiting now.
func (q *recordQueue) snapshot() []*queuedRecord {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.waiting[:len(q.waiting):len(q.waiting)]
}

// countQueued calls fn for the events of ids in queued (a snapshot taken
// before the read) that the read did not see; visible is the newest record
// number it saw. A record leaves the queue only after its commit, and one
// not committed yet has no number or one above every committed record.
func countQueued(queued []*queuedRecord, visible int64, ids []string, fn func(id, outcome, createdAt string)) {
	if len(queued) == 0 {
		return
	}
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	for _, r := range queued {
		if seq := r.seq.Load(); seq != 0 && seq <= visible {
			continue
		}
		for _, ev := range r.events {
			if want[ev.CardID] {
				fn(ev.CardID, ev.Outcome, r.createdAt)
			}
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
