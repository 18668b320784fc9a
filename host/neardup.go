package host

import (
	"context"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/internal/neardup"
	"github.com/palacehq/palace/store"
)

// Near-duplicate warnings name the live cards at a new card's anchor that it
// nearly repeats. A warning never refuses: the card is written, a person
// decides.

// nearIndex is the live cards at one anchor, indexed by statement.
type nearIndex struct {
	texts []store.CandidateText
	index *neardup.Index
}

// nearIndexAt reads and indexes the statements of the live cards at
// anchorID, but those leave names. A failure is KindInternal.
func (h *Host) nearIndexAt(ctx context.Context, anchorID string, leave func(id string) bool) (*nearIndex, error) {
	all, err := h.store.CandidateTexts(ctx, store.CandidateQuery{AnchorIDs: []string{anchorID}, Statuses: domain.LiveStatuses(), Limit: 1})
	if err != nil {
		return nil, internal(err, "read statements")
	}
	x := &nearIndex{index: neardup.NewIndex(nil)}
	for _, t := range all {
		if leave == nil || !leave(t.ID) {
			x.texts = append(x.texts, t)
			x.index.Add(t.Statement)
		}
	}
	return x, nil
}

// near returns the indexed cards statement nearly repeats, most alike
// first, at most maxNeighbours, leaving out those skip names.
func (x *nearIndex) near(statement string, skip func(id string) bool) []neardup.Card {
	var out []neardup.Card
	for _, m := range x.index.Near(statement, -1) {
		t := x.texts[m.Entry]
		if skip(t.ID) {
			continue
		}
		out = append(out, neardup.Card{ID: t.ID, Statement: t.Statement, Exact: m.Exact, Similarity: m.Similarity})
		if len(out) == maxNeighbours {
			break
		}
	}
	return out
}

// nearNew names, per new card id, the live cards at its anchor it nearly
// repeats: those there before and, with amongNew, the ids written before it
// (quadratic, so a large sync passes false). Unknown ids are left out.
func (h *Host) nearNew(ctx context.Context, ids []string, amongNew bool) (map[string][]neardup.Card, error) {
	out := map[string][]neardup.Card{}
	if len(ids) == 0 {
		return out, nil
	}
	cards, err := h.store.CardsByIDs(ctx, ids)
	if err != nil {
		return nil, internal(err, "read new cards")
	}
	order := make(map[string]int, len(ids))
	for i, id := range ids {
		order[id] = i
	}
	indexes := map[string]*nearIndex{}
	for i, id := range ids {
		c, ok := cards[id]
		if !ok {
			continue
		}
		x, ok := indexes[c.AnchorID]
		if !ok {
			var leave func(string) bool
			if !amongNew {
				leave = func(other string) bool { _, isNew := order[other]; return isNew }
			}
			if x, err = h.nearIndexAt(ctx, c.AnchorID, leave); err != nil {
				return nil, err
			}
			indexes[c.AnchorID] = x
		}
		if x.index.Len() == 0 && !amongNew {
			continue
		}
		near := x.near(c.Statement, func(other string) bool {
			j, isNew := order[other]
			return other == id || isNew && j > i
		})
		if len(near) > 0 {
			out[id] = near
		}
	}
	return out, nil
}
