package store

import (
	"context"
	"fmt"
	"slices"

	"github.com/palacehq/palace/domain"
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
// request record lists them. OutcomeSkippedScope is only counted per request.
var Outcomes = domain.Strings(domain.Outcomes)

// The outcomes as the store's rows and records spell them.
// OutcomeSkippedScope is a candidate whose scope did not apply.
const (
	OutcomeInlineFull    = string(domain.OutcomeInlineFull)
	OutcomeInlineCompact = string(domain.OutcomeInlineCompact)
	OutcomeRefOnly       = string(domain.OutcomeRefOnly)
	OutcomeTrimmed       = string(domain.OutcomeTrimmed)
	OutcomeSkippedCooled = string(domain.OutcomeSkippedCooled)
	OutcomeSkippedScope  = string(domain.OutcomeSkippedScope)
	OutcomeViewed        = string(domain.OutcomeViewed)
)

// InjectionStats are one card's injection events in a window.
type InjectionStats struct {
	// Counts counts events per outcome.
	Counts map[string]int
	// Latest is the newest created_at per outcome.
	Latest map[string]string
}

// InjectionStats returns, per card of cardIDs, the count and newest time of
// each outcome over the UTC days from since's day on, or of all time when
// since is "" (inline_full and inline_compact only). skipped_scope is never
// counted; cards without events are missing. The read is bounded by days
// and outcomes, never by the number of requests.
func (s *Store) InjectionStats(ctx context.Context, cardIDs []string, since string) (map[string]InjectionStats, error) {
	_ = s.FlushRecords() // a failure stays queued for Close to report
	out := make(map[string]InjectionStats, len(cardIDs))
	for chunk := range slices.Chunk(cardIDs, 500) {
		args := anySlice(chunk)
		query := `SELECT 0, card_id, outcome, total, last_at FROM injection_window WHERE card_id IN (` + placeholders(len(chunk)) + `)
			AND outcome IN ('inline_full', 'inline_compact') ` + unfoldedRecords
		day := ""
		if since != "" {
			// Summed in Go, not GROUP BY: the rows come in key order.
			day = since[:min(len(since), 10)]
			query = `SELECT 0, card_id, outcome, n, last_at FROM injection_daily
				WHERE card_id IN (` + placeholders(len(chunk)) + `) AND day >= ? ` + unfoldedRecords
			args = append(args, day)
		}
		rows, err := s.db.QueryContext(ctx, query, args...)
		if err != nil {
			return nil, fmt.Errorf("read injection events: %w", err)
		}
		add := func(id, outcome string, count int, latest string) {
			st, ok := out[id]
			if !ok {
				st = InjectionStats{Counts: map[string]int{}, Latest: map[string]string{}}
				out[id] = st
			}
			st.Counts[outcome] += count
			st.Latest[outcome] = max(st.Latest[outcome], latest)
		}
		var recs []rawRecord
		var kind int
		var id, outcome string
		var v, latest any
		for rows.Next() {
			if err := rows.Scan(&kind, &id, &outcome, &v, &latest); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read injection events: %w", err)
			}
			if kind == 1 {
				// An unfolded record: created_at, then its cards.
				at, _ := v.(string)
				r, err := decodeRecord(at, latest)
				if err != nil {
					rows.Close()
					return nil, err
				}
				recs = append(recs, r)
				continue
			}
			count, _ := v.(int64)
			at, _ := latest.(string)
			add(id, outcome, int(count), at)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read injection events: %w", err)
		}
		err = s.unfoldedEvents(ctx, recs, chunk, func(id, outcome, at string) {
			if since == "" && outcome != "inline_full" && outcome != "inline_compact" {
				return
			}
			if at[:min(len(at), 10)] >= day {
				add(id, outcome, 1, at)
			}
		})
		if err != nil {
			return nil, err
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

// injectionSummariesSQL is InjectionSummaries answered by SQLite alone, for
// windows the cached running counts cannot answer: each running count is
// summed from its day list or corrected by the daily rows between its base
// and since's day, and the unfolded records read in the same statement.
func (s *Store) injectionSummariesSQL(ctx context.Context, cardIDs []string, since string, groups [][]string, latest []string, queued []*queuedRecord) (*summaries, error) {
	sums := newSummaries(len(cardIDs), groups, latest)
	day := since[:min(len(since), 10)]
	for chunk := range slices.Chunk(cardIDs, 400) {
		// ?1 is since's day. Days in [since, base) are added to n, days in
		// [base, since) taken from it; a count whose newest event is older
		// than since is 0. A row whose day list reaches since is summed from
		// the list (count -1, the list last); only others read injection_daily.
		const fromList = `r.days IS NOT NULL AND date(substr(w.last_at, 1, 10), '-` + recentDaysBack + ` days') <= ?1`
		rows, err := s.db.QueryContext(ctx, `SELECT 0, w.card_id, w.outcome, w.last_at, CASE WHEN w.base = ?1 THEN w.n WHEN substr(w.last_at, 1, 10) < ?1 THEN 0
				WHEN `+fromList+` THEN -1 ELSE w.n + coalesce((
				SELECT sum(CASE WHEN d.day >= ?1 THEN d.n ELSE -d.n END) FROM injection_daily d
				WHERE d.card_id = w.card_id AND d.day >= min(?1, w.base) AND d.day < max(?1, w.base) AND d.outcome = w.outcome), 0) END,
				CASE WHEN w.base <> ?1 AND substr(w.last_at, 1, 10) >= ?1 AND `+fromList+` THEN r.days END
			FROM injection_window w LEFT JOIN injection_recent r ON r.card_id = w.card_id AND r.outcome = w.outcome
			WHERE w.card_id IN (`+placeholders(len(chunk))+`)
			UNION ALL SELECT 1, '', '', created_at, seq, cards FROM injection_requests WHERE seq > (SELECT seq FROM injection_fold)
			UNION ALL SELECT 2, '', '', '', seq, NULL FROM injection_fold`,
			append([]any{day}, anySlice(chunk)...)...)
		if err != nil {
			return nil, fmt.Errorf("read injection rollups: %w", err)
		}
		var recs []rawRecord
		var mark int64
		// Typed columns, declared once: no allocation per column.
		var kind, count int
		var id, outcome, last string
		var cards any
		for rows.Next() {
			cards = nil
			if err := rows.Scan(&kind, &id, &outcome, &last, &count, &cards); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read injection rollups: %w", err)
			}
			if kind == 2 {
				mark = int64(count)
				continue
			}
			if kind == 1 {
				r, err := decodeRecord(last, cards)
				if err != nil {
					rows.Close()
					return nil, err
				}
				r.seq = int64(count)
				recs = append(recs, r)
				continue
			}
			if count < 0 {
				list, _ := cards.(string)
				count = sumDaysFrom(list, day)
			}
			sums.add(id, outcome, last, count)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read injection rollups: %w", err)
		}
		if err := s.pendingEvents(ctx, recs, mark, queued, chunk, sums.inWindow(day)); err != nil {
			return nil, err
		}
	}
	return sums, nil
}

// summaries gathers InjectionSummaries' answer.
type summaries struct {
	out     map[string]InjectionSummary
	groupOf map[string]int
	groups  int
	latest  []string
}

func newSummaries(n int, groups [][]string, latest []string) *summaries {
	s := &summaries{out: make(map[string]InjectionSummary, n), groupOf: map[string]int{}, groups: len(groups), latest: latest}
	for i, g := range groups {
		for _, o := range g {
			s.groupOf[o] = i
		}
	}
	return s
}

// inWindow returns a callback that counts one event of a record (an
// unfolded or queued one) for its card: in the window when its day is
// day or later.
func (s *summaries) inWindow(day string) func(id, outcome, at string) {
	return func(id, outcome, at string) {
		count := 0
		if at[:min(len(at), 10)] >= day {
			count = 1
		}
		s.add(id, outcome, at, count)
	}
}

// add counts count events of outcome for card id, the newest at last.
func (s *summaries) add(id, outcome, last string, count int) {
	g, counted := s.groupOf[outcome]
	isLatest := slices.Contains(s.latest, outcome)
	if !isLatest && (!counted || count == 0) {
		return
	}
	sum, ok := s.out[id]
	if !ok {
		sum.Counts = make([]int, s.groups)
	}
	if counted {
		sum.Counts[g] += count
	}
	if isLatest {
		sum.Latest = max(sum.Latest, last)
	}
	s.out[id] = sum
}
