package store

import (
	"context"
	"fmt"
	"slices"

	"github.com/palacehq/palace/domain"
)

// The store's caches of cards, as of the data version (see dataVersion).
// cards holds whole cards by rowid; an entry is also checked against the
// id the index gives. The cards it hands out share their scope and trigger
// lists with the cache: callers copy a list before changing it. texts
// holds statements and contents by rowid, for rankings that read every
// visible card's text. links holds the link rows LinkRows reads, by card
// (a card read without links is held with none); fullLinks the full links
// LinksFor returns (notes, times, the evidence's source and original) of
// the few cards a brief quotes.
const (
	cardCacheMax     = 1 << 13
	textCacheMax     = 1 << 16
	linkCacheMax     = 1 << 12
	fullLinkCacheMax = 1 << 9
)

// rowCard is a selected card's rowid and id.
type rowCard struct {
	rowid int64
	id    string
}

// cardsAt returns the cards of rows, read at version, from the cache or
// the table, in rows' order; a card gone since rows were read (deleted by
// something other than palace) is left out.
func (s *Store) cardsAt(ctx context.Context, version dataVersion, rows []rowCard) ([]domain.Card, error) {
	out := make([]domain.Card, len(rows))
	rowids := make([]int64, len(rows))
	for i, r := range rows {
		rowids[i] = r.rowid
	}
	s.cards.GetMany(version, rowids, func(i int, c domain.Card) {
		if rows[i].id == "" || rows[i].id == c.ID {
			out[i] = c
		}
	})
	var missing []int64
	at := map[int64]int{}
	for i, c := range out {
		if c.ID == "" {
			missing = append(missing, rows[i].rowid)
			at[rows[i].rowid] = i
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	read := make(map[int64]domain.Card, len(missing))
	var found []int64
	for rest := missing; len(rest) > 0; {
		n := min(len(rest), 500)
		chunk := rest[:n]
		rest = rest[n:]
		q, err := s.db.QueryContext(ctx, `SELECT `+cardCols+`, rowid FROM cards WHERE rowid IN (`+placeholders(n)+`)`, anySlice(chunk)...)
		if err != nil {
			return nil, fmt.Errorf("read cards: %w", err)
		}
		if err := scanCardsWith(q, func(c domain.Card, rowid int) {
			if i, ok := at[int64(rowid)]; ok {
				out[i] = c
				read[int64(rowid)] = c
				found = append(found, int64(rowid))
			}
		}); err != nil {
			return nil, fmt.Errorf("read cards: %w", err)
		}
	}
	s.cards.PutMany(version, found, func(rowid int64) domain.Card { return read[rowid] })
	if len(read) < len(missing) {
		out = slices.DeleteFunc(out, func(c domain.Card) bool { return c.ID == "" })
	}
	return out, nil
}
