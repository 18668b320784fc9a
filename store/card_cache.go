package store

import (
	"context"
	"slices"

	"github.com/palacehq/palace/domain"
)

// Bounds of the card caches (see dataVersion): whole cards and texts by
// rowid, LinkRows' rows and LinksFor's full links by card. Cached cards
// share their scope and trigger lists: callers copy a list to change it.
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
	for chunk := range slices.Chunk(missing, 500) {
		if err := queryCards(ctx, s.db, "read cards", `SELECT `+cardCols+`, rowid FROM cards WHERE rowid IN (`+placeholders(len(chunk))+`)`, anySlice(chunk), true, func(c domain.Card, rowid int) {
			if i, ok := at[int64(rowid)]; ok {
				out[i] = c
				read[int64(rowid)] = c
				found = append(found, int64(rowid))
			}
		}); err != nil {
			return nil, err
		}
	}
	s.cards.PutMany(version, found, func(rowid int64) domain.Card { return read[rowid] })
	if len(read) < len(missing) {
		out = slices.DeleteFunc(out, func(c domain.Card) bool { return c.ID == "" })
	}
	return out, nil
}
