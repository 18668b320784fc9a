package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/palacehq/palace/domain"
)

// insertLink adds l; inserted is false when the same (card, evidence, role)
// link exists already.
func (tx *Tx) insertLink(ctx context.Context, l domain.Link) (inserted bool, err error) {
	res, err := tx.exec(ctx, `INSERT INTO card_links(card_id, evidence_id, role, note, created_at)
		VALUES (?,?,?,?,?) ON CONFLICT(card_id, evidence_id, role) DO NOTHING`,
		l.CardID, l.EvidenceID, l.Role, l.Note, l.CreatedAt)
	if err != nil {
		return false, fmt.Errorf("link %s to %s as %s: %w", l.CardID, l.EvidenceID, l.Role, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// Links returns the links of one card in creation order.
func (s *Store) Links(ctx context.Context, cardID string) ([]domain.Link, error) {
	m, err := linksFor(ctx, s.db, []string{cardID})
	return m[cardID], err
}

// Links is the in-transaction form of Store.Links.
func (tx *Tx) Links(ctx context.Context, cardID string) ([]domain.Link, error) {
	m, err := linksFor(ctx, tx.tx, []string{cardID})
	return m[cardID], err
}

// LinksFor returns the links of many cards, keyed by card id. Up to
// fullLinkCacheMax cards go through the full-link cache, whose slices
// callers must not change.
func (s *Store) LinksFor(ctx context.Context, cardIDs []string) (map[string][]domain.Link, error) {
	if len(cardIDs) > fullLinkCacheMax {
		return linksFor(ctx, s.db, cardIDs)
	}
	version, err := s.version(ctx)
	if err != nil {
		return nil, fmt.Errorf("read links: %w", err)
	}
	out := make(map[string][]domain.Link, len(cardIDs))
	missing := s.fullLinks.GetMany(version, cardIDs, func(i int, ls []domain.Link) {
		if len(ls) > 0 {
			out[cardIDs[i]] = ls
		}
	})
	if len(missing) == 0 {
		return out, nil
	}
	read, err := linksFor(ctx, s.db, missing)
	if err != nil {
		return nil, err
	}
	s.fullLinks.PutMany(version, missing, func(id string) []domain.Link { return read[id] })
	for id, ls := range read {
		out[id] = ls
	}
	return out, nil
}

func linksFor(ctx context.Context, q querier, ids []string) (map[string][]domain.Link, error) {
	out := make(map[string][]domain.Link, len(ids))
	for chunk := range slices.Chunk(ids, 500) {
		err := queryEach(ctx, q, `SELECT l.card_id, l.evidence_id, l.role, l.note, l.created_at, e.source_ref,
			COALESCE(d.original_id, l.evidence_id), e.provenance, e.actor_type, e.created_at
			FROM card_links l JOIN evidence e ON e.id = l.evidence_id
			LEFT JOIN evidence_duplicates d ON d.evidence_id = l.evidence_id
			WHERE l.card_id IN (`+placeholders(len(chunk))+`)
			ORDER BY l.card_id, l.created_at, l.rowid`, anySlice(chunk), func(rows *sql.Rows) error {
			var l domain.Link
			err := rows.Scan(&l.CardID, &l.EvidenceID, (*string)(&l.Role), &l.Note, &l.CreatedAt, &l.SourceRef,
				&l.Original, (*string)(&l.Provenance), (*string)(&l.ActorType), &l.EvidenceAt)
			out[l.CardID] = append(out[l.CardID], l)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("read links: %w", err)
		}
	}
	return out, nil
}
