package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/palacehq/palace/internal/cache"
)

// InjectionSummaries returns, per card of cardIDs, the number of events of
// each outcome group over the UTC days from since's day on, and the newest
// event ever of the latest outcomes. Cards without any such event are
// missing from the map. Unfolded and still-queued records are counted too.
//
// Running counts change only at a fold, so they are cached as of the fold
// mark; a fold between the reads means every card is read again at the new
// mark. A window no row can answer from its count or day list is left to
// injectionSummariesSQL.
func (s *Store) InjectionSummaries(ctx context.Context, cardIDs []string, since string, groups [][]string, latest []string) (map[string]InjectionSummary, error) {
	sums, err := s.injectionSummaries(ctx, cardIDs, since, groups, latest, s.records.snapshot())
	if err != nil {
		return nil, err
	}
	return sums.out, nil
}

// injectionSummaries is InjectionSummaries with queued, the records queued
// before the read began.
func (s *Store) injectionSummaries(ctx context.Context, cardIDs []string, since string, groups [][]string, latest []string, queued []*queuedRecord) (*summaries, error) {
	day := since[:min(len(since), 10)]
	listUntil := ""
	if t, err := time.Parse(time.DateOnly, day); err == nil {
		listUntil = t.AddDate(0, 0, recentDays).Format(time.DateOnly)
	}
	_, seq, recs, err := s.readWindows(ctx, nil)
	if err != nil {
		return nil, err
	}
	s.advanceWindows(ctx, seq)
	rows := make(map[string][]windowRow, len(cardIDs))
	missing := s.windows.GetMany(seq, cardIDs, func(i int, rs []windowRow) { rows[cardIDs[i]] = rs })
	if len(missing) > 0 {
		got, seq2, recs2, stable, err := s.readWindowsOf(ctx, missing)
		if err == nil && stable && seq2 != seq {
			// A fold between the two reads: every card at the new mark.
			got, seq2, recs2, stable, err = s.readWindowsOf(ctx, cardIDs)
			rows = map[string][]windowRow{}
			missing = cardIDs
		}
		if err != nil {
			return nil, err
		}
		if !stable {
			return s.injectionSummariesSQL(ctx, cardIDs, since, groups, latest, queued)
		}
		for id, rs := range got {
			rows[id] = rs
		}
		seq, recs = seq2, recs2
		s.windows.PutMany(seq, missing, func(id string) []windowRow { return got[id] })
	}
	sums := newSummaries(len(cardIDs), groups, latest)
	for _, id := range cardIDs {
		for _, w := range rows[id] {
			count, ok := w.countFrom(day, listUntil)
			if !ok {
				return s.injectionSummariesSQL(ctx, cardIDs, since, groups, latest, queued)
			}
			sums.add(id, w.outcome, w.last, count)
		}
	}
	if err := s.pendingEvents(ctx, recs, seq, queued, cardIDs, sums.inWindow(day)); err != nil {
		return nil, err
	}
	return sums, nil
}

// windowRow is one running count of a card as the last fold left it.
type windowRow struct {
	outcome, base, last, days string
	n                         int
	hasDays                   bool
}

// countFrom is the row's count of events from day on: its running count
// when its base is day, 0 when its newest event is older, else the sum of
// its day list when the list reaches day (its newest day before
// listUntil). ok is false when none applies.
func (w windowRow) countFrom(day, listUntil string) (int, bool) {
	lastDay := w.last[:min(len(w.last), 10)]
	switch {
	case w.base == day:
		return w.n, true
	case lastDay < day:
		return 0, true
	case w.hasDays && lastDay < listUntil:
		return sumDaysFrom(w.days, day), true
	}
	return 0, false
}

// windowCacheMax bounds the window cache: cards' running counts as of one
// fold mark, true while the mark stands (a card without rows is held too).
const windowCacheMax = 1 << 16

// advanceWindows moves the cache past other processes' folds up to to,
// dropping the cards the records in between name (and any cached id the
// rowid cache cannot map). With a record gone or more than advanceMax in
// between, the cache is left for the read to empty.
func (s *Store) advanceWindows(ctx context.Context, to int64) {
	from, ok := s.windows.Version()
	if !ok || from >= to || to-from > advanceMax {
		return
	}
	recs, err := readRecords(ctx, s.db, `SELECT created_at, cards FROM injection_requests WHERE seq > ? AND seq <= ?`, from, to)
	if err != nil || int64(len(recs)) != to-from {
		return
	}
	rowids := map[int64]bool{}
	named := map[string]bool{}
	for _, r := range recs {
		for _, rids := range r.rowids {
			for _, rid := range rids {
				rowids[rid] = true
			}
		}
		for _, ids := range r.named {
			for _, id := range ids {
				named[id] = true
			}
		}
	}
	s.windows.Move(from, to, func(id string) bool {
		if named[id] {
			return true
		}
		rid, ok := s.rowids.Get(cache.Forever{}, id)
		return !ok || rowids[rid]
	})
}

// advanceMax is the most records a reader decodes to keep its running
// counts across other processes' folds; past it, reading the cards again is
// cheaper.
const advanceMax = 4096

// readWindowsOf reads the running counts of ids, in chunks, each with the
// fold mark and the unfolded records. stable is false when the chunks saw
// different marks (folds ran between them); the caller then reads the way
// that needs no cache.
func (s *Store) readWindowsOf(ctx context.Context, ids []string) (map[string][]windowRow, int64, []rawRecord, bool, error) {
	out := map[string][]windowRow{}
	var seq int64 = -1
	var recs []rawRecord
	for chunk := range slices.Chunk(ids, 400) {
		got, cseq, crecs, err := s.readWindows(ctx, chunk)
		if err != nil {
			return nil, 0, nil, false, err
		}
		if seq >= 0 && cseq != seq {
			return nil, 0, nil, false, nil
		}
		seq, recs = cseq, crecs
		for id, rs := range got {
			out[id] = rs
		}
	}
	return out, seq, recs, true, nil
}

// readWindows reads, in one statement, the running counts of ids (none
// when ids is empty), the fold mark and the records not folded yet.
func (s *Store) readWindows(ctx context.Context, ids []string) (map[string][]windowRow, int64, []rawRecord, error) {
	q := `SELECT 2, '', '', '', seq, '', NULL FROM injection_fold
		UNION ALL SELECT 1, '', '', '', seq, created_at, cards FROM injection_requests WHERE seq > (SELECT seq FROM injection_fold)`
	if len(ids) > 0 {
		q = `SELECT 0, w.card_id, w.outcome, w.base, w.n, w.last_at, r.days
			FROM injection_window w LEFT JOIN injection_recent r ON r.card_id = w.card_id AND r.outcome = w.outcome
			WHERE w.card_id IN (` + placeholders(len(ids)) + `) UNION ALL ` + q
	}
	rows, err := s.db.QueryContext(ctx, q, anySlice(ids)...)
	if err != nil {
		return nil, 0, nil, fmt.Errorf("read injection rollups: %w", err)
	}
	defer rows.Close()
	got := map[string][]windowRow{}
	var seq int64
	var recs []rawRecord
	var kind, n int
	var id, outcome, base, last string
	var extra any
	for rows.Next() {
		extra = nil
		if err := rows.Scan(&kind, &id, &outcome, &base, &n, &last, &extra); err != nil {
			return nil, 0, nil, fmt.Errorf("read injection rollups: %w", err)
		}
		switch kind {
		case 2:
			seq = int64(n)
		case 1:
			r, err := decodeRecord(last, extra)
			if err != nil {
				return nil, 0, nil, err
			}
			r.seq = int64(n)
			recs = append(recs, r)
		default:
			w := windowRow{outcome: outcome, base: base, last: last, n: n}
			if d, ok := extra.(string); ok {
				w.days, w.hasDays = d, true
			}
			got[id] = append(got[id], w)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, 0, nil, fmt.Errorf("read injection rollups: %w", err)
	}
	return got, seq, recs, nil
}
