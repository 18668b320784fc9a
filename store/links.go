package store

import (
	"context"
	"fmt"
)

// Link ties a card to one piece of evidence in a role. SourceRef is the
// evidence's source_ref, joined in on reads for citations.
type Link struct {
	CardID     string `json:"card_id"`
	EvidenceID string `json:"evidence_id"`
	Role       string `json:"role"`
	Note       string `json:"note,omitempty"`
	CreatedAt  string `json:"created_at"`
	SourceRef  string `json:"source_ref"`

	// Original is the evidence this link counts as: the evidence itself, or
	// the original it duplicates. Joined in on reads.
	Original string `json:"-"`
	// Provenance, ActorType and EvidenceAt are the evidence's, joined in on
	// reads for the gate.
	Provenance string `json:"-"`
	ActorType  string `json:"-"`
	EvidenceAt string `json:"-"`
}

// InsertLink adds l; inserted is false when the same (card, evidence, role)
// link exists already.
func (tx *Tx) InsertLink(ctx context.Context, l Link) (inserted bool, err error) {
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
func (s *Store) Links(ctx context.Context, cardID string) ([]Link, error) {
	m, err := linksFor(ctx, s.db, []string{cardID})
	return m[cardID], err
}

// Links is the in-transaction form of Store.Links.
func (tx *Tx) Links(ctx context.Context, cardID string) ([]Link, error) {
	m, err := linksFor(ctx, tx.tx, []string{cardID})
	return m[cardID], err
}

// LinksFor returns the links of many cards, keyed by card id.
func (s *Store) LinksFor(ctx context.Context, cardIDs []string) (map[string][]Link, error) {
	return linksFor(ctx, s.db, cardIDs)
}

func linksFor(ctx context.Context, q querier, ids []string) (map[string][]Link, error) {
	out := make(map[string][]Link, len(ids))
	for len(ids) > 0 {
		n := min(len(ids), 500)
		chunk := ids[:n]
		ids = ids[n:]
		rows, err := q.QueryContext(ctx, `SELECT l.card_id, l.evidence_id, l.role, l.note, l.created_at, e.source_ref,
			COALESCE(d.original_id, l.evidence_id), e.provenance, e.actor_type, e.created_at
			FROM card_links l JOIN evidence e ON e.id = l.evidence_id
			LEFT JOIN evidence_duplicates d ON d.evidence_id = l.evidence_id
			WHERE l.card_id IN (`+placeholders(len(chunk))+`)
			ORDER BY l.card_id, l.created_at, l.rowid`, anySlice(chunk)...)
		if err != nil {
			return nil, fmt.Errorf("read links: %w", err)
		}
		for rows.Next() {
			var l Link
			if err := rows.Scan(&l.CardID, &l.EvidenceID, &l.Role, &l.Note, &l.CreatedAt, &l.SourceRef,
				&l.Original, &l.Provenance, &l.ActorType, &l.EvidenceAt); err != nil {
				rows.Close()
				return nil, fmt.Errorf("scan link: %w", err)
			}
			out[l.CardID] = append(out[l.CardID], l)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read links: %w", err)
		}
	}
	return out, nil
}

// CountRoles counts a card's distinct evidence per role: a duplicate counts
// as its original, and a piece of evidence linked in more than one role
// (possible only in palaces from before one role per link was enforced)
// counts in the role it was linked in first.
func CountRoles(links []Link) map[string]int {
	out := map[string]int{"supporting": 0, "verification": 0, "teaching": 0, "counterexample": 0}
	for _, l := range DistinctLinks(links) {
		out[l.Role]++
	}
	return out
}

// DistinctLinks keeps the first link of each piece of evidence (by
// Original, the evidence itself when Original is unset), in order.
func DistinctLinks(links []Link) []Link {
	seen := make(map[string]bool, len(links))
	out := make([]Link, 0, len(links))
	for _, l := range links {
		k := l.Original
		if k == "" {
			k = l.EvidenceID
		}
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, l)
	}
	return out
}
