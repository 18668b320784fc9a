package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/internal/cache"
)

// selectionCacheMax bounds the cache of candidate selections, keyed by
// anchors and statuses; expiry is applied at read, so one entry serves
// every request time.
const selectionCacheMax = 64

// selectionRow is one card of a selection.
type selectionRow struct {
	rowid       int64
	id          string
	tier        domain.Tier
	persistence domain.Persistence
	anchorID    string
	expiresAt   string
	expires     bool
}

// liveAt applies the selection's expiry: candidateWhere's
// "expires_at IS NULL OR expires_at > now", nothing without a time.
func (r *selectionRow) liveAt(now string) bool {
	return now == "" || !r.expires || r.expiresAt > now
}

// selection returns the cards q selects, expiry not applied, with the data
// version read before the rows. Selections of every anchor are not cached.
func (s *Store) selection(ctx context.Context, q CandidateQuery) (_ []selectionRow, version dataVersion, _ error) {
	version, err := s.version(ctx)
	if err != nil {
		return nil, version, fmt.Errorf("read candidate selection: %w", err)
	}
	key := strings.Join(q.AnchorIDs, ",") + "|" + strings.Join(domain.Strings(q.Statuses), ",")
	cacheable := len(q.AnchorIDs) > 0
	if cacheable {
		if rows, ok := s.selections.Get(version, key); ok {
			return rows, version, nil
		}
	}
	all := q
	all.Now = ""
	where, args := candidateWhere("c.", all)
	var out []selectionRow
	err = queryEach(ctx, s.db, `SELECT c.rowid, c.id, c.tier, c.persistence, c.anchor_id, c.expires_at FROM cards c WHERE `+where, args, func(rows *sql.Rows) error {
		var r selectionRow
		var expires sql.NullString
		if err := rows.Scan(&r.rowid, &r.id, (*string)(&r.tier), (*string)(&r.persistence), &r.anchorID, &expires); err != nil {
			return err
		}
		r.expiresAt, r.expires = expires.String, expires.Valid
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, version, fmt.Errorf("read candidate selection: %w", err)
	}
	if cacheable {
		s.selections.Put(version, key, out)
	}
	if len(out) <= memoMax { // a recording request names its candidates by rowid
		for i := range out {
			s.rowids.Put(cache.Forever{}, out[i].id, out[i].rowid)
		}
	}
	return out, version, nil
}
