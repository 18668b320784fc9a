package store

import (
	"context"
	"fmt"
	"sync"

	"github.com/palacehq/palace/domain"
)

// CandidateText is the part of a card a relevance ranking reads.
type CandidateText struct {
	// RowID reads the whole card back with CardsByRowIDs.
	RowID       int64
	ID          string
	Statement   string
	Content     string
	Tier        domain.Tier
	Persistence domain.Persistence
	AnchorID    string
}

// CandidateTexts returns every card q selects (ignoring Match and Limit)
// with only the columns a relevance ranking needs, in no particular order
// (sorting whole rows in SQLite costs more than the caller's own order).
// Callers use it when the selection is too large to read whole.
//
// The selection comes from the selection cache (see selectionCache) or the
// covering index; statements and contents from the store's text cache (see
// textCache), and only the cards it does not hold are read from the table.
func (s *Store) CandidateTexts(ctx context.Context, q CandidateQuery) ([]CandidateText, error) {
	sel, _, version, err := s.selection(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("read candidate texts: %w", err)
	}
	out := make([]CandidateText, 0, len(sel))
	for i := range sel {
		if r := &sel[i]; r.liveAt(q.Now) {
			out = append(out, CandidateText{RowID: r.rowid, ID: r.id, Tier: r.tier, Persistence: r.persistence, AnchorID: r.anchorID})
		}
	}
	missing := s.texts.fill(version, out)
	for len(missing) > 0 {
		n := min(len(missing), 500)
		chunk := missing[:n]
		missing = missing[n:]
		at := make(map[int64]int, len(chunk))
		rowids := make([]any, len(chunk))
		for i, k := range chunk {
			at[out[k].RowID] = k
			rowids[i] = out[k].RowID
		}
		rows, err := s.db.QueryContext(ctx, `SELECT rowid, statement, content FROM cards WHERE rowid IN (`+placeholders(len(chunk))+`)`, rowids...)
		if err != nil {
			return nil, fmt.Errorf("read candidate texts: %w", err)
		}
		for rows.Next() {
			var rowid int64
			var stmt, content string
			if err := rows.Scan(&rowid, &stmt, &content); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read candidate texts: %w", err)
			}
			if k, ok := at[rowid]; ok {
				out[k].Statement, out[k].Content = stmt, content
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read candidate texts: %w", err)
		}
		s.texts.store(version, out, chunk)
	}
	return out, nil
}

// textCache holds card statements and contents by rowid, with the card id
// they belong to, as of one card_text_version. Palace never rewrites a
// card's text (lifecycle changes touch status and attributes), and any
// UPDATE of statement or content — by palace or not, by any process —
// bumps the version, which empties the cache at the next read. Cards are
// never deleted. It is bounded like refCache.
type textCache struct {
	mu      sync.Mutex
	version int64
	m       map[int64]cardText
}

type cardText struct{ id, statement, content string }

const textCacheMax = 1 << 16

// fill sets the texts of out's cards that the cache holds at version and
// returns the indexes of the others.
func (c *textCache) fill(version int64, out []CandidateText) []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || c.version != version {
		c.m, c.version = map[int64]cardText{}, version
	}
	var missing []int
	for i := range out {
		if t, ok := c.m[out[i].RowID]; ok && t.id == out[i].ID {
			out[i].Statement, out[i].Content = t.statement, t.content
		} else {
			missing = append(missing, i)
		}
	}
	return missing
}

// store keeps the texts of out[idx...], read at version.
func (c *textCache) store(version int64, out []CandidateText, idx []int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.version != version {
		return // a newer read has moved on; these may be stale
	}
	if len(c.m)+len(idx) > textCacheMax {
		c.m = map[int64]cardText{}
	}
	for _, k := range idx {
		t := out[k]
		c.m[t.RowID] = cardText{t.ID, t.Statement, t.Content}
	}
}

// CandidateCards returns every card q selects (ignoring Match and Limit),
// whole, in no particular order. Callers use it when the selection is
// within their bound. The selection comes from the selection cache or an
// index; the cards from the card cache (see cardCache) or the table.
func (s *Store) CandidateCards(ctx context.Context, q CandidateQuery) ([]domain.Card, error) {
	// The selection's card version, read before its rows, versions the
	// cards read through the card cache too.
	rows, version, _, err := s.selection(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("read candidate cards: %w", err)
	}
	sel := make([]rowCard, 0, len(rows))
	for i := range rows {
		if r := &rows[i]; r.liveAt(q.Now) {
			sel = append(sel, rowCard{rowid: r.rowid, id: r.id})
		}
	}
	cards, err := s.cardsAt(ctx, version.changes, sel)
	if err != nil {
		return nil, fmt.Errorf("read candidate cards: %w", err)
	}
	return cards, nil
}
