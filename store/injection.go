package store

import (
	"context"
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

// InjectionStats are one card's injection events in a window.
type InjectionStats struct {
	// Counts counts events per outcome.
	Counts map[string]int
	// Latest is the newest created_at per outcome.
	Latest map[string]string
}

// InjectionStats returns, per card of cardIDs, the count and newest time of
// each outcome among the events of the UTC days from since's day on (the
// rollup counts by day), or of all time when since is "" (kept for the
// applied outcomes, inline_full and inline_compact, only). skipped_scope is
// never rolled up. Cards without events are missing from the map. The read
// is bounded by days and outcomes (injection_daily, injection_last), never
// by the number of requests.
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
// missing from the map. The window is summed in SQLite, one row per card:
// a card in daily use has a row per day and outcome (~100 over the
// window), and reading those rows one by one cost a 10k-card request
// three times its reads on a year-old palace, measured; the rows come in
// key order, so the GROUP BY needs no sorter.
func (s *Store) InjectionSummaries(ctx context.Context, cardIDs []string, since string, groups [][]string, latest []string) (map[string]InjectionSummary, error) {
	out := make(map[string]InjectionSummary, len(cardIDs))
	var sums strings.Builder
	var groupArgs []any
	var counted []string
	for _, g := range groups {
		sums.WriteString(", sum(CASE WHEN outcome IN (" + placeholders(len(g)) + ") THEN n ELSE 0 END)")
		groupArgs = append(groupArgs, anySlice(g)...)
		counted = append(counted, g...)
	}
	for len(cardIDs) > 0 {
		n := min(len(cardIDs), 400)
		chunk := cardIDs[:n]
		cardIDs = cardIDs[n:]
		in := placeholders(len(chunk))
		args := append(slices.Clone(groupArgs), anySlice(chunk)...)
		args = append(args, since[:min(len(since), 10)])
		args = append(args, anySlice(counted)...)
		query := `SELECT card_id, ''` + sums.String() + ` FROM injection_daily WHERE card_id IN (` + in + `) AND day >= ? AND outcome IN (` + placeholders(len(counted)) + `) GROUP BY card_id`
		if len(latest) > 0 {
			query += ` UNION ALL SELECT card_id, max(last_at)` + strings.Repeat(", 0", len(groups)) + ` FROM injection_last
				WHERE card_id IN (` + in + `) AND outcome IN (` + placeholders(len(latest)) + `) GROUP BY card_id`
			args = append(args, anySlice(chunk)...)
			args = append(args, anySlice(latest)...)
		}
		rows, err := s.db.QueryContext(ctx, query, args...)
		if err != nil {
			return nil, fmt.Errorf("read injection rollups: %w", err)
		}
		counts := make([]int, len(groups))
		dest := make([]any, 2+len(groups))
		var id, last string
		dest[0], dest[1] = &id, &last
		for i := range counts {
			dest[2+i] = &counts[i]
		}
		for rows.Next() {
			if err := rows.Scan(dest...); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read injection rollups: %w", err)
			}
			sum, ok := out[id]
			if !ok {
				sum.Counts = make([]int, len(groups))
			}
			for i, c := range counts {
				sum.Counts[i] += c
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
