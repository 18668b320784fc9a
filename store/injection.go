package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// InjectionEvent is what one context request (or one view) did with one
// card.
type InjectionEvent struct {
	RequestID string `json:"request_id"`
	CardID    string `json:"card_id"`
	// Outcome is inline_full, inline_compact, ref_only, trimmed,
	// skipped_cooled, skipped_scope or viewed.
	Outcome   string `json:"outcome"`
	CreatedAt string `json:"created_at"`
}

// Outcomes are the injection outcomes a request may record, in the order a
// request record lists them. OutcomeSkippedScope is counted per request,
// never stored per card: most candidates of a request are out of scope, and
// nothing reads them.
var Outcomes = []string{"inline_full", "inline_compact", "ref_only", "trimmed", "skipped_cooled", "viewed", OutcomeSkippedScope}

// OutcomeSkippedScope is a candidate whose scope did not apply.
const OutcomeSkippedScope = "skipped_scope"

// ErrBadOutcome is returned for an outcome not in Outcomes, or a card id
// that cannot be written into a request record.
var ErrBadOutcome = errors.New("bad injection outcome")

// InjectionRequest is one request's telemetry as it is kept: the cards per
// outcome, and only the number of skipped_scope cards.
type InjectionRequest struct {
	RequestID string `json:"request_id"`
	CreatedAt string `json:"created_at"`
	// Cards maps an outcome to the ids of the cards that had it, in the
	// request's order. skipped_scope is never a key.
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

// RecordInjections records one request's events (all of one request id and
// time): one injection_requests row, and the rollups that cooling and the
// audit read (injection_daily, injection_last) for every outcome but
// skipped_scope, each in one statement. An unknown outcome or a card id
// holding ',', ';' or ':' is ErrBadOutcome and nothing is written; an
// unknown card id is a constraint error. It returns the record's sequence
// number (records are numbered in insertion order), 0 for no events.
func (tx *Tx) RecordInjections(ctx context.Context, events []InjectionEvent) (int64, error) {
	if len(events) == 0 {
		return 0, nil
	}
	req, err := encodeRequest(events)
	if err != nil {
		return 0, err
	}
	res, err := tx.exec(ctx, `INSERT INTO injection_requests(request_id, created_at, cards, scope_skipped) VALUES (?,?,?,?)`,
		events[0].RequestID, events[0].CreatedAt, req.text, req.scopeSkipped)
	if err != nil {
		return 0, fmt.Errorf("record injection request %s: %w", events[0].RequestID, err)
	}
	if err := tx.rollUp(ctx, req.rolled, events[0].CreatedAt); err != nil {
		return 0, fmt.Errorf("record injection request %s: %w", events[0].RequestID, err)
	}
	seq, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("record injection request %s: %w", events[0].RequestID, err)
	}
	return seq, nil
}

// encoded is a request's record text and what it rolls up.
type encoded struct {
	text         string
	scopeSkipped int
	rolled       []InjectionEvent
}

// encodeRequest writes events as "outcome:id,id;outcome:id" in Outcomes
// order, skipped_scope as a count.
func encodeRequest(events []InjectionEvent) (encoded, error) {
	var e encoded
	byOutcome := map[string][]string{}
	for _, ev := range events {
		if ev.RequestID != events[0].RequestID || ev.CreatedAt != events[0].CreatedAt {
			return e, fmt.Errorf("%w: events of requests %s and %s in one record", ErrBadOutcome, events[0].RequestID, ev.RequestID)
		}
		if !slices.Contains(Outcomes, ev.Outcome) {
			return e, fmt.Errorf("%w %q for card %s: want one of %s", ErrBadOutcome, ev.Outcome, ev.CardID, strings.Join(Outcomes, ", "))
		}
		if ev.CardID == "" || strings.ContainsAny(ev.CardID, ",;:") {
			return e, fmt.Errorf("%w: card id %q cannot be recorded", ErrBadOutcome, ev.CardID)
		}
		if ev.Outcome == OutcomeSkippedScope {
			e.scopeSkipped++
			continue
		}
		byOutcome[ev.Outcome] = append(byOutcome[ev.Outcome], ev.CardID)
		e.rolled = append(e.rolled, ev)
	}
	var b strings.Builder
	for _, o := range Outcomes {
		ids := byOutcome[o]
		if len(ids) == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(';')
		}
		b.WriteString(o)
		b.WriteByte(':')
		b.WriteString(strings.Join(ids, ","))
	}
	e.text = b.String()
	return e, nil
}

// decodeRequest reads a record text back.
func decodeRequest(text string) (map[string][]string, error) {
	out := map[string][]string{}
	if text == "" {
		return out, nil
	}
	for seg := range strings.SplitSeq(text, ";") {
		o, ids, ok := strings.Cut(seg, ":")
		if !ok || !slices.Contains(Outcomes, o) || ids == "" {
			return nil, fmt.Errorf("%w: record segment %q", ErrBadOutcome, seg)
		}
		out[o] = append(out[o], strings.Split(ids, ",")...)
	}
	return out, nil
}

// rollUp adds events (all at stamp) to injection_daily and injection_last,
// one multi-row upsert per table and per 200 events.
func (tx *Tx) rollUp(ctx context.Context, events []InjectionEvent, stamp string) error {
	day := stamp[:min(len(stamp), 10)]
	for len(events) > 0 {
		n := min(len(events), 200)
		chunk := events[:n]
		events = events[n:]
		daily := make([]any, 0, 4*n)
		last := make([]any, 0, 3*n)
		for _, ev := range chunk {
			daily = append(daily, ev.CardID, day, ev.Outcome, stamp)
			last = append(last, ev.CardID, ev.Outcome, stamp)
		}
		dq := `INSERT INTO injection_daily(card_id, day, outcome, n, last_at) VALUES ` +
			strings.TrimSuffix(strings.Repeat("(?,?,?,1,?),", n), ",") +
			` ON CONFLICT(card_id, day, outcome) DO UPDATE SET n = n + 1, last_at = max(last_at, excluded.last_at)`
		if _, err := tx.tx.ExecContext(ctx, dq, daily...); err != nil {
			return fmt.Errorf("roll up by day: %w", err)
		}
		lq := `INSERT INTO injection_last(card_id, outcome, total, last_at) VALUES ` +
			strings.TrimSuffix(strings.Repeat("(?,?,1,?),", n), ",") +
			` ON CONFLICT(card_id, outcome) DO UPDATE SET total = total + 1, last_at = max(last_at, excluded.last_at)`
		if _, err := tx.tx.ExecContext(ctx, lq, last...); err != nil {
			return fmt.Errorf("roll up: %w", err)
		}
	}
	return nil
}

// InjectionStats are one card's injection events in a window.
type InjectionStats struct {
	// Counts counts events per outcome.
	Counts map[string]int
	// Latest is the newest created_at per outcome.
	Latest map[string]string
}

// InjectionStats returns, per card of cardIDs, the count and newest time of
// each outcome among the events of the UTC days from since's day on (the
// rollup counts by day), or of all time when since is "". Cards without
// events are missing from the map. The read is bounded by days and outcomes
// (injection_daily, injection_last), never by the number of requests.
func (s *Store) InjectionStats(ctx context.Context, cardIDs []string, since string) (map[string]InjectionStats, error) {
	out := make(map[string]InjectionStats, len(cardIDs))
	for len(cardIDs) > 0 {
		n := min(len(cardIDs), 500)
		chunk := cardIDs[:n]
		cardIDs = cardIDs[n:]
		args := anySlice(chunk)
		query := `SELECT card_id, outcome, total, last_at FROM injection_last WHERE card_id IN (` + placeholders(len(chunk)) + `)`
		if since != "" {
			// Summed here rather than with GROUP BY: the rows come in key
			// order and a temp b-tree would cost more than the sum.
			query = `SELECT card_id, outcome, n, last_at FROM injection_daily
				WHERE card_id IN (` + placeholders(len(chunk)) + `) AND day >= ?`
			args = append(args, since[:min(len(since), 10)])
		}
		rows, err := s.db.QueryContext(ctx, query, args...)
		if err != nil {
			return nil, fmt.Errorf("read injection events: %w", err)
		}
		for rows.Next() {
			var id, outcome, latest string
			var count int
			if err := rows.Scan(&id, &outcome, &count, &latest); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read injection events: %w", err)
			}
			st, ok := out[id]
			if !ok {
				st = InjectionStats{Counts: map[string]int{}, Latest: map[string]string{}}
				out[id] = st
			}
			st.Counts[outcome] += count
			st.Latest[outcome] = max(st.Latest[outcome], latest)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read injection events: %w", err)
		}
	}
	return out, nil
}

// InjectionSummary is one card's injection rollup as a context request
// reads it.
type InjectionSummary struct {
	// Counts[i] sums the card's events of the outcomes groups[i] over the
	// window given to InjectionSummaries.
	Counts []int
	// Latest is the newest event of the latest outcomes ever, "" if none.
	Latest string
}

// InjectionSummaries returns, per card of cardIDs, the number of events of
// each outcome group over the UTC days from since's day on, and the newest
// event ever of the latest outcomes. Cards without any such event are
// missing from the map. It is one statement over both rollups; the rows
// are summed here, as summing them in SQLite (CASE per group) measured
// slower than reading them.
func (s *Store) InjectionSummaries(ctx context.Context, cardIDs []string, since string, groups [][]string, latest []string) (map[string]InjectionSummary, error) {
	out := make(map[string]InjectionSummary, len(cardIDs))
	group := map[string]int{}
	for i, g := range groups {
		for _, o := range g {
			group[o] = i
		}
	}
	for len(cardIDs) > 0 {
		n := min(len(cardIDs), 400)
		chunk := cardIDs[:n]
		cardIDs = cardIDs[n:]
		in := placeholders(len(chunk))
		args := append(anySlice(chunk), since[:min(len(since), 10)])
		query := `SELECT card_id, outcome, n, '' FROM injection_daily WHERE card_id IN (` + in + `) AND day >= ?`
		if len(latest) > 0 {
			query += ` UNION ALL SELECT card_id, outcome, 0, last_at FROM injection_last
				WHERE card_id IN (` + in + `) AND outcome IN (` + placeholders(len(latest)) + `)`
			args = append(args, anySlice(chunk)...)
			args = append(args, anySlice(latest)...)
		}
		rows, err := s.db.QueryContext(ctx, query, args...)
		if err != nil {
			return nil, fmt.Errorf("read injection rollups: %w", err)
		}
		for rows.Next() {
			var id, outcome, last string
			var count int
			if err := rows.Scan(&id, &outcome, &count, &last); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read injection rollups: %w", err)
			}
			g, counted := group[outcome]
			if !counted && last == "" {
				continue
			}
			sum, ok := out[id]
			if !ok {
				sum.Counts = make([]int, len(groups))
			}
			if counted {
				sum.Counts[g] += count
			}
			sum.Latest = max(sum.Latest, last)
			out[id] = sum
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read injection rollups: %w", err)
		}
	}
	return out, nil
}
