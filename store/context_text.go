package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/palacehq/palace/domain"
)

// CandidateText is the part of a card a relevance ranking reads.
type CandidateText struct {
	ID          string
	Statement   string
	Content     string
	Tier        domain.Tier
	Persistence domain.Persistence
	AnchorID    string
	// rowid reads the whole card back (CardsOf).
	rowid int64
}

type cardText struct{ id, statement, content string }

// CandidateTexts returns every card q selects (ignoring Match and Limit)
// with only the columns a relevance ranking needs, in no particular order,
// for selections too large to read whole; CardsOf reads the cards picked.
func (s *Store) CandidateTexts(ctx context.Context, q CandidateQuery) ([]CandidateText, error) {
	sel, version, err := s.selection(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("read candidate texts: %w", err)
	}
	out := make([]CandidateText, 0, len(sel))
	rowids := make([]int64, 0, len(sel))
	for i := range sel {
		if r := &sel[i]; r.liveAt(q.Now) {
			rowids = append(rowids, r.rowid)
			out = append(out, CandidateText{rowid: r.rowid, ID: r.id, Tier: r.tier, Persistence: r.persistence, AnchorID: r.anchorID})
		}
	}
	var stale []int64 // rowids held with another card's id
	missing := s.texts.GetMany(version, rowids, func(i int, t cardText) {
		if o := &out[i]; o.ID == t.id {
			o.Statement, o.Content = t.statement, t.content
		} else {
			stale = append(stale, o.rowid)
		}
	})
	missing = append(missing, stale...)
	var at map[int64]int // rowid → index in out, for the rows read
	if len(missing) > 0 {
		at = make(map[int64]int, len(out))
		for i := range out {
			at[out[i].rowid] = i
		}
	}
	for chunk := range slices.Chunk(missing, 500) {
		err := queryEach(ctx, s.db, `SELECT rowid, statement, content FROM cards WHERE rowid IN (`+placeholders(len(chunk))+`)`, anySlice(chunk), func(rows *sql.Rows) error {
			var rowid int64
			var stmt, content string
			if err := rows.Scan(&rowid, &stmt, &content); err != nil {
				return err
			}
			if k, ok := at[rowid]; ok {
				out[k].Statement, out[k].Content = stmt, content
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read candidate texts: %w", err)
		}
	}
	s.texts.PutMany(version, missing, func(rowid int64) cardText {
		t := &out[at[rowid]]
		return cardText{t.ID, t.Statement, t.Content}
	})
	return out, nil
}

// CardsOf reads the cards of texts (from CandidateTexts), keyed by id.
func (s *Store) CardsOf(ctx context.Context, texts []CandidateText) (map[string]domain.Card, error) {
	version, err := s.version(ctx)
	if err != nil {
		return nil, fmt.Errorf("read cards: %w", err)
	}
	sel := make([]rowCard, len(texts))
	for i, t := range texts {
		sel[i] = rowCard{rowid: t.rowid, id: t.ID}
	}
	cards, err := s.cardsAt(ctx, version, sel)
	if err != nil {
		return nil, err
	}
	out := make(map[string]domain.Card, len(cards))
	for _, c := range cards {
		out[c.ID] = c
	}
	return out, nil
}

// CandidateCards returns every card q selects (ignoring Match and Limit),
// whole, in no particular order.
func (s *Store) CandidateCards(ctx context.Context, q CandidateQuery) ([]domain.Card, error) {
	rows, version, err := s.selection(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("read candidate cards: %w", err)
	}
	sel := make([]rowCard, 0, len(rows))
	for i := range rows {
		if r := &rows[i]; r.liveAt(q.Now) {
			sel = append(sel, rowCard{rowid: r.rowid, id: r.id})
		}
	}
	cards, err := s.cardsAt(ctx, version, sel)
	if err != nil {
		return nil, fmt.Errorf("read candidate cards: %w", err)
	}
	return cards, nil
}
