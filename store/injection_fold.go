package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/palacehq/palace/internal/cache"
)

// rawRecord is one request record's cards, decoded.
type rawRecord struct {
	seq       int64 // 0 where the read does not need it
	createdAt string
	// rowids maps an outcome to card rowids (records written as blobs),
	// named to card ids (records converted from per-card rows).
	rowids map[string][]int64
	named  map[string][]string
}

func decodeRecord(createdAt string, cards any) (rawRecord, error) {
	rowids, named, err := decodeRequest(cards)
	if err != nil {
		return rawRecord{}, fmt.Errorf("read injection request of %s: %w", createdAt, err)
	}
	return rawRecord{createdAt: createdAt, rowids: rowids, named: named}, nil
}

// each calls fn for every card of the record with an outcome, in Outcomes
// order; a rowid not in names is left out.
func (r rawRecord) each(names map[int64]string, fn func(id, outcome string)) {
	for _, o := range Outcomes {
		for _, rid := range r.rowids[o] {
			if id, ok := names[rid]; ok {
				fn(id, o)
			}
		}
		for _, id := range r.named[o] {
			fn(id, o)
		}
	}
}

// readRecords decodes the records query selects (created_at, cards).
func readRecords(ctx context.Context, q querier, query string, args ...any) ([]rawRecord, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read injection requests: %w", err)
	}
	defer rows.Close()
	var out []rawRecord
	for rows.Next() {
		var at string
		var cards any
		if err := rows.Scan(&at, &cards); err != nil {
			return nil, fmt.Errorf("read injection requests: %w", err)
		}
		r, err := decodeRecord(at, cards)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read injection requests: %w", err)
	}
	return out, nil
}

// cardIDsOf maps the rowids of the cards that exist to their ids.
func cardIDsOf(ctx context.Context, q querier, rowids []int64) (map[int64]string, error) {
	out := make(map[int64]string, len(rowids))
	for chunk := range slices.Chunk(rowids, 500) {
		err := queryEach(ctx, q, `SELECT rowid, id FROM cards WHERE rowid IN (`+placeholders(len(chunk))+`)`, anySlice(chunk), func(rows *sql.Rows) error {
			var rid int64
			var id string
			if err := rows.Scan(&rid, &id); err != nil {
				return err
			}
			out[rid] = id
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read card ids: %w", err)
		}
	}
	return out, nil
}

// cardNames maps every card rowid the records name to its id; a rowid no
// card has is ErrNotFound.
func cardNames(ctx context.Context, q querier, recs []rawRecord) (map[int64]string, error) {
	seen := map[int64]bool{}
	var want []int64
	for _, r := range recs {
		for _, rids := range r.rowids {
			for _, rid := range rids {
				if !seen[rid] {
					seen[rid] = true
					want = append(want, rid)
				}
			}
		}
	}
	out, err := cardIDsOf(ctx, q, want)
	if err != nil {
		return nil, err
	}
	for rid := range seen {
		if _, ok := out[rid]; !ok {
			return nil, fmt.Errorf("%w: card rowid %d of an injection request", ErrNotFound, rid)
		}
	}
	return out, nil
}

// unfoldedRecords is the part of a rollup read that selects the records
// not folded yet, as rows of kind 1 (with created_at and cards last) after the
// rollup rows (kind 0): one statement reads both from one snapshot, so a
// fold between them cannot count a record twice or not at all.
const unfoldedRecords = `UNION ALL SELECT 1, '', '', created_at, cards FROM injection_requests
	WHERE seq > (SELECT seq FROM injection_fold)`

// unfoldedEvents calls fn for each event of recs whose card is one of ids.
func (s *Store) unfoldedEvents(ctx context.Context, recs []rawRecord, ids []string, fn func(id, outcome, createdAt string)) error {
	if len(recs) == 0 {
		return nil
	}
	names, err := s.cardNames(ctx, ids)
	if err != nil {
		return err
	}
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	for _, r := range recs {
		r.each(names, func(id, outcome string) {
			if want[id] {
				fn(id, outcome, r.createdAt)
			}
		})
	}
	return nil
}

// pendingEvents calls fn for the events of ids that a rollup read must add
// to the rollups it read: those of the unfolded records it read (recs,
// after the fold mark) and those of the records queued before it began
// that it did not see (see countQueued).
func (s *Store) pendingEvents(ctx context.Context, recs []rawRecord, mark int64, queued []*queuedRecord, ids []string, fn func(id, outcome, createdAt string)) error {
	if err := s.unfoldedEvents(ctx, recs, ids, fn); err != nil {
		return err
	}
	visible := mark
	for _, r := range recs {
		visible = max(visible, r.seq)
	}
	countQueued(queued, visible, ids, fn)
	return nil
}

// cardNames maps the rowids of the cards of ids that exist to their ids,
// reading only those the rowid cache does not hold: cards are never
// deleted and VACUUM keeps their rowids, so an entry never goes stale.
func (s *Store) cardNames(ctx context.Context, ids []string) (map[int64]string, error) {
	out := make(map[int64]string, len(ids))
	missing := s.rowids.GetMany(cache.Forever{}, ids, func(i int, rid int64) { out[rid] = ids[i] })
	for chunk := range slices.Chunk(missing, 500) {
		err := queryEach(ctx, s.db, `SELECT rowid, id FROM cards WHERE id IN (`+placeholders(len(chunk))+`)`, anySlice(chunk), func(rows *sql.Rows) error {
			var rid int64
			var id string
			if err := rows.Scan(&rid, &id); err != nil {
				return err
			}
			out[rid] = id
			s.rowids.Put(cache.Forever{}, id, rid)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read card rowids: %w", err)
		}
	}
	return out, nil
}
