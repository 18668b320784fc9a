package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// folder folds waiting request records into the rollups off the
// recording request's path. A fold of FoldEvery records writes a page of
// each rollup table per card they name — ~15 ms on the 10k-card benchmark
// palace, the spike of every sixteenth recorded request when it ran inside
// that request's transaction. The request now commits its record alone and
// returns; one goroutine per store folds, in its own write transaction, up
// to the newest record that asked for it. Readers add the records not yet
// folded to the rollups in the same statement, so counts are exact
// whether or not a fold has run, and a fold that fails (the database busy
// past the timeout) leaves the records for the next one. Another process
// folding the same records first is harmless: each fold re-reads the mark
// in its transaction.
type folder struct {
	mu      sync.Mutex
	running bool
	target  int64 // the newest record a fold was asked to reach
	err     error // the last fold's failure, reported by SettleFolds
	done    *sync.Cond
}

// start asks for a fold up to record last when FoldEvery records wait
// past the fold mark (folded, as the recording transaction read it) and
// past the target already asked for, so that records fold in batches of
// FoldEvery even while a fold runs. It starts the goroutine unless one is
// running (which goes on to the new target when it finishes).
func (f *folder) start(s *Store, folded, last int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if last-max(folded, f.target) < FoldEvery {
		return
	}
	f.target = last
	if f.running {
		return
	}
	f.running = true
	go f.run(s)
}

func (f *folder) run(s *Store) {
	var reached int64
	for {
		f.mu.Lock()
		to := f.target
		if to <= reached {
			f.running = false
			if f.done != nil {
				f.done.Broadcast()
			}
			f.mu.Unlock()
			return
		}
		f.mu.Unlock()
		// Not the request's context: the request has returned, and its
		// cancellation must not leave the fold half-asked.
		err := s.Tx(context.Background(), func(tx *Tx) error { return tx.fold(context.Background(), to+1, to, &rollups{}, true) })
		if err != nil {
			err = fmt.Errorf("fold request records up to %d: %w", to, err)
		}
		f.mu.Lock()
		f.err = err
		f.mu.Unlock()
		reached = to
	}
}

// SettleFolds writes the queued request records (FlushRecords), waits
// until no fold runs and returns a failure of either. Close calls it;
// tests call it to read the rollups a fold has written.
func (s *Store) SettleFolds() error {
	recErr := s.FlushRecords()
	f := &s.folds
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done == nil {
		f.done = sync.NewCond(&f.mu)
	}
	for f.running {
		f.done.Wait()
	}
	return errors.Join(recErr, f.err)
}
