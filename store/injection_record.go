package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrBadOutcome is returned for an outcome not in Outcomes, or events of
// several requests given as one.
var ErrBadOutcome = errors.New("bad injection outcome")

// InjectionRequest is one request's telemetry as it is kept: the cards per
// outcome, and only the number of skipped_scope cards.
type InjectionRequest struct {
	RequestID string `json:"request_id"`
	CreatedAt string `json:"created_at"`
	// Cards maps an outcome to the ids of the cards that had it, in card
	// order. skipped_scope is never a key.
	Cards map[string][]string `json:"cards"`
	// ScopeSkipped counts the candidates whose scope did not apply.
	ScopeSkipped int `json:"scope_skipped"`
}

// Events lists the request's per-card outcomes (skipped_scope excluded) in
// Outcomes order.
func (r InjectionRequest) Events() []InjectionEvent {
	var out []InjectionEvent
	for _, o := range Outcomes {
		for _, id := range r.Cards[o] {
			out = append(out, InjectionEvent{RequestID: r.RequestID, CardID: id, Outcome: o, CreatedAt: r.CreatedAt})
		}
	}
	return out
}

// RecordInjections records one request's events (one request id and time)
// and waits for the write. An unknown outcome is ErrBadOutcome, an unknown
// card ErrNotFound, and nothing is written. It returns the record's
// sequence number, 0 for no events.
func (s *Store) RecordInjections(ctx context.Context, events []InjectionEvent) (int64, error) {
	r, err := s.queueRecord(ctx, events, nil, "")
	if r == nil || err != nil {
		return 0, err
	}
	if err := s.FlushRecords(); err != nil {
		return 0, err
	}
	return r.seq.Load(), nil
}

// RecordInjectionBatch records many requests in one transaction that also
// folds them and any unfolded records into the rollups. It returns each
// request's sequence number (0 for one without events).
func (s *Store) RecordInjectionBatch(ctx context.Context, requests [][]InjectionEvent) ([]int64, error) {
	if !slices.ContainsFunc(requests, func(events []InjectionEvent) bool { return len(events) > 0 }) {
		return make([]int64, len(requests)), nil // nothing to write, so no write transaction either
	}
	var ids []string
	for _, events := range requests {
		for _, ev := range events {
			if ev.Outcome != OutcomeSkippedScope {
				ids = append(ids, ev.CardID)
			}
		}
	}
	rowids, err := s.cardRowIDs(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("record injections: %w", err)
	}
	var sums rollups
	blobs := make([][]byte, len(requests))
	scope := make([]int, len(requests))
	for i, events := range requests {
		if len(events) == 0 {
			continue
		}
		if blobs[i], scope[i], err = encodeRequest(events, rowids); err != nil {
			return nil, fmt.Errorf("record injection request %s: %w", events[0].RequestID, err)
		}
		for _, ev := range events {
			if ev.Outcome != OutcomeSkippedScope {
				sums.add(ev.CardID, ev.Outcome, events[0].CreatedAt)
			}
		}
	}
	seqs := make([]int64, len(requests))
	err = s.Tx(ctx, func(tx *Tx) error {
		var first, last int64
		for i, events := range requests {
			if len(events) == 0 {
				continue
			}
			var err error
			if seqs[i], err = tx.insertRecord(ctx, events[0].RequestID, events[0].CreatedAt, blobs[i], scope[i]); err != nil {
				return err
			}
			if first == 0 {
				first = seqs[i]
			}
			last = seqs[i]
		}
		_, err := tx.fold(ctx, first, last, &sums, true)
		return err
	})
	if err != nil {
		return nil, err
	}
	return seqs, nil
}

// foldEvery is how many request records may wait unfolded; the write that
// reaches it folds them all, off the requests' path (docs/rationale.md).
const foldEvery = 16

// rollupKey and rollups sum events per card, UTC day and outcome.
type rollupKey struct{ card, day, outcome string }

type rollups struct {
	sums  map[rollupKey]*rollupSum
	order []rollupKey
}

type rollupSum struct {
	n    int
	last string
}

func (r *rollups) add(card, outcome, stamp string) {
	if r.sums == nil {
		r.sums = map[rollupKey]*rollupSum{}
	}
	k := rollupKey{card, stamp[:min(len(stamp), 10)], outcome}
	a, ok := r.sums[k]
	if !ok {
		a = &rollupSum{}
		r.sums[k] = a
		r.order = append(r.order, k)
	}
	a.n++
	a.last = max(a.last, stamp)
}

// fold brings the rollups up to record last when force is set or foldEvery
// records wait: it adds the unfolded records before first and sums (the
// records first..last) to the rollups and moves the fold mark to last. It
// returns the mark it moved from, or -1 when no fold was due.
func (tx *Tx) fold(ctx context.Context, first, last int64, sums *rollups, force bool) (int64, error) {
	var folded int64
	if err := tx.tx.QueryRowContext(ctx, `SELECT seq FROM injection_fold`).Scan(&folded); err != nil {
		return -1, fmt.Errorf("read injection fold mark: %w", err)
	}
	if !force && last-folded < foldEvery || folded >= last {
		return -1, nil // not due, or another fold got there first
	}
	pending, err := readRecords(ctx, tx.tx, `SELECT created_at, cards FROM injection_requests WHERE seq > ? AND seq < ? ORDER BY seq`, folded, first)
	if err != nil {
		return -1, err
	}
	names, err := cardNames(ctx, tx.tx, pending)
	if err != nil {
		return -1, err
	}
	for _, r := range pending {
		r.each(names, func(id, outcome string) { sums.add(id, outcome, r.createdAt) })
	}
	if err := tx.writeRollups(ctx, sums); err != nil {
		return -1, err
	}
	if _, err := tx.tx.ExecContext(ctx, `UPDATE injection_fold SET seq = ?`, last); err != nil {
		return -1, fmt.Errorf("move injection fold mark: %w", err)
	}
	return folded, nil
}

// insertRecord writes one request record and returns its sequence number.
func (tx *Tx) insertRecord(ctx context.Context, requestID, createdAt string, blob []byte, scopeSkipped int) (int64, error) {
	res, err := tx.exec(ctx, `INSERT INTO injection_requests(request_id, created_at, cards, scope_skipped) VALUES (?,?,?,?)`,
		requestID, createdAt, blob, scopeSkipped)
	if err == nil {
		var seq int64
		if seq, err = res.LastInsertId(); err == nil {
			return seq, nil
		}
	}
	return 0, fmt.Errorf("record injection request %s: %w", requestID, err)
}

// writeRollups adds sums to injection_daily, injection_window and the day
// lists of injection_recent.
func (tx *Tx) writeRollups(ctx context.Context, sums *rollups) error {
	order := sums.order
	// Oldest day first: a later day's move of base must see the earlier days.
	slices.SortStableFunc(order, func(a, b rollupKey) int { return strings.Compare(a.day, b.day) })
	for chunk := range slices.Chunk(order, 200) {
		n := len(chunk)
		daily := make([]any, 0, 5*n)
		window := make([]any, 0, 6*n)
		for _, k := range chunk {
			a := sums.sums[k]
			daily = append(daily, k.card, k.day, k.outcome, a.n, a.last)
			window = append(window, k.card, k.outcome, k.day, a.n, a.n, a.last)
		}
		if _, err := tx.tx.ExecContext(ctx, `INSERT INTO injection_daily(card_id, day, outcome, n, last_at) VALUES `+
			strings.TrimSuffix(strings.Repeat("(?,?,?,?,?),", n), ",")+
			` ON CONFLICT(card_id, day, outcome) DO UPDATE SET n = n + excluded.n, last_at = max(last_at, excluded.last_at)`, daily...); err != nil {
			return fmt.Errorf("roll up injections by day: %w", err)
		}
		// n counts the days from base on, so a write for an earlier day
		// leaves it; a later day moves base to windowDays before it, taking
		// the days it passes out of n.
		if _, err := tx.tx.ExecContext(ctx, `INSERT INTO injection_window(card_id, outcome, base, n, total, last_at) VALUES `+
			strings.TrimSuffix(strings.Repeat("(?,?,?,?,?,?),", n), ",")+
			` ON CONFLICT(card_id, outcome) DO UPDATE SET
				n = n + CASE WHEN excluded.base >= base THEN excluded.n ELSE 0 END
					- CASE WHEN base < coalesce(date(excluded.base, '-`+windowDays+` days'), base) THEN coalesce((
						SELECT sum(d.n) FROM injection_daily d WHERE d.card_id = excluded.card_id
						AND d.day >= injection_window.base AND d.day < date(excluded.base, '-`+windowDays+` days') AND d.outcome = excluded.outcome), 0) ELSE 0 END,
				base = max(base, coalesce(date(excluded.base, '-`+windowDays+` days'), base)),
				total = total + excluded.total, last_at = max(last_at, excluded.last_at)`, window...); err != nil {
			return fmt.Errorf("roll up injections over the window: %w", err)
		}
	}
	return tx.writeRecentDays(ctx, sums)
}

// windowDays is how far behind a card's newest day its running counts' base
// is kept (the cooling horizon). Counts are exact with any base.
const windowDays = "30"

// cardRowIDs maps card ids to their rowids; an unknown id is ErrNotFound.
// Cards are never deleted and VACUUM keeps rowids, so a rowid names one card
// for good.
func (s *Store) cardRowIDs(ctx context.Context, ids []string) (map[string]int64, error) {
	names, err := s.cardNames(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(names))
	for rid, id := range names {
		out[id] = rid
	}
	for _, id := range ids {
		if out[id] == 0 {
			return nil, fmt.Errorf("%w: card %s", ErrNotFound, id)
		}
	}
	return out, nil
}

// encodeRequest codes a request's cards: for each outcome in Outcomes order
// that has cards, its index byte, the count and the ascending rowids as
// uvarint deltas. skipped_scope cards are only counted.
func encodeRequest(events []InjectionEvent, rowids map[string]int64) ([]byte, int, error) {
	byOutcome := make([][]int64, len(Outcomes))
	scope := 0
	for _, ev := range events {
		if ev.RequestID != events[0].RequestID || ev.CreatedAt != events[0].CreatedAt {
			return nil, 0, fmt.Errorf("%w: events of requests %s and %s in one record", ErrBadOutcome, events[0].RequestID, ev.RequestID)
		}
		i := slices.Index(Outcomes, ev.Outcome)
		if i < 0 {
			return nil, 0, fmt.Errorf("%w %q for card %s: want one of %s", ErrBadOutcome, ev.Outcome, ev.CardID, strings.Join(Outcomes, ", "))
		}
		if ev.Outcome == OutcomeSkippedScope {
			scope++
			continue
		}
		byOutcome[i] = append(byOutcome[i], rowids[ev.CardID])
	}
	var b []byte
	for i, rs := range byOutcome {
		if len(rs) == 0 {
			continue
		}
		slices.Sort(rs)
		b = append(b, byte(i))
		b = binary.AppendUvarint(b, uint64(len(rs)))
		prev := int64(0)
		for _, r := range rs {
			b = binary.AppendUvarint(b, uint64(r-prev))
			prev = r
		}
	}
	if b == nil {
		b = []byte{}
	}
	return b, scope, nil
}

// decodeRequest reads a record's cards as outcome → rowids. A text value
// is the form records converted from per-card rows have ("outcome:id,id;
// outcome:id"); its ids come back in named.
func decodeRequest(v any) (rowids map[string][]int64, named map[string][]string, err error) {
	switch v := v.(type) {
	case string:
		named = map[string][]string{}
		if v == "" {
			return nil, named, nil
		}
		for seg := range strings.SplitSeq(v, ";") {
			o, ids, ok := strings.Cut(seg, ":")
			if !ok || !slices.Contains(Outcomes, o) || ids == "" {
				return nil, nil, fmt.Errorf("%w: record segment %q", ErrBadOutcome, seg)
			}
			named[o] = append(named[o], strings.Split(ids, ",")...)
		}
		return nil, named, nil
	case []byte:
		rowids = map[string][]int64{}
		for len(v) > 0 {
			i := int(v[0])
			if i >= len(Outcomes) {
				return nil, nil, fmt.Errorf("%w: outcome index %d in a record", ErrBadOutcome, i)
			}
			v = v[1:]
			n, k := binary.Uvarint(v)
			if k <= 0 || n > uint64(len(v)) {
				return nil, nil, fmt.Errorf("%w: truncated record", ErrBadOutcome)
			}
			v = v[k:]
			prev := int64(0)
			for range n {
				d, k := binary.Uvarint(v)
				if k <= 0 {
					return nil, nil, fmt.Errorf("%w: truncated record", ErrBadOutcome)
				}
				v = v[k:]
				prev += int64(d)
				rowids[Outcomes[i]] = append(rowids[Outcomes[i]], prev)
			}
		}
		return rowids, nil, nil
	}
	return nil, nil, fmt.Errorf("%w: record of type %T", ErrBadOutcome, v)
}
