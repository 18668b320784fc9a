package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/palacehq/palace/domain"
)

// selectionCache holds candidate selections — the cards of a set of
// anchors with a set of statuses, as the cards_context index lists them —
// as of the cards' version (card_version and the largest card rowid, as
// memoryCache). Expiry is applied when the selection is read, so one
// entry serves every request time. At 100k cards scanning the index for
// the ~2,000 cards a repository sees, twice (the count, then the rows),
// was a third of a context request; a brief does it twice more.
type selectionCache = versionedCache[[]selectionRow]

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

// selection returns the cards q selects, expiry not applied, with the
// version of the cards (for the card cache) and of their texts (for the
// text cache), both read before the rows. Selections of every anchor (AllRepos) are
// not cached: they are the whole palace.
func (s *Store) selection(ctx context.Context, q CandidateQuery) (_ []selectionRow, version memoryVersion, textVersion int64, _ error) {
	// The versions are read before the rows: a change after this read
	// moves them, so the next read drops what this one caches.
	if err := s.db.QueryRowContext(ctx, `SELECT (SELECT n FROM card_version), coalesce((SELECT max(rowid) FROM cards), 0),
		(SELECT n FROM card_text_version)`).Scan(&version.changes, &version.maxRowID, &textVersion); err != nil {
		return nil, version, 0, fmt.Errorf("read card version: %w", err)
	}
	key := strings.Join(q.AnchorIDs, ",") + "|" + strings.Join(domain.Strings(q.Statuses), ",")
	cacheable := len(q.AnchorIDs) > 0
	if cacheable {
		if rows, ok := s.selections.get(version, key); ok {
			return rows, version, textVersion, nil
		}
	}
	all := q
	all.Now = ""
	where, args := candidateWhere("c.", all)
	rows, err := s.db.QueryContext(ctx, `SELECT c.rowid, c.id, c.tier, c.persistence, c.anchor_id, c.expires_at FROM cards c WHERE `+where, args...)
	if err != nil {
		return nil, version, 0, fmt.Errorf("read candidate selection: %w", err)
	}
	defer rows.Close()
	var out []selectionRow
	for rows.Next() {
		var r selectionRow
		var expires sql.NullString
		if err := rows.Scan(&r.rowid, &r.id, (*string)(&r.tier), (*string)(&r.persistence), &r.anchorID, &expires); err != nil {
			return nil, version, 0, fmt.Errorf("read candidate selection: %w", err)
		}
		r.expiresAt, r.expires = expires.String, expires.Valid
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, version, 0, fmt.Errorf("read candidate selection: %w", err)
	}
	if cacheable {
		s.selections.put(version, key, out)
	}
	s.rowids.learn(out) // a card's rowid never changes: cards are never deleted
	return out, version, textVersion, nil
}
