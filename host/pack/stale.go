package pack

import (
	"context"
	"maps"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/staleness"
	"github.com/palacehq/palace/internal/hosterr"
)

// StalePenalty is the salience a stale card loses: it still renders, with
// its warning, after the fresh cards of its lane, and is pushed out first.
const StalePenalty = 10

// applyStaleness looks at the code the shown cards of this checkout cite
// and at their dates: a stale card is marked and loses StalePenalty salience
// (breakdown "stale"). Foreign cards (their code is not here) and cards left
// at inspector_only (a penalty cannot move them) are not looked at.
func (pl *Pipeline) applyStaleness(ctx context.Context, a *assembly) error {
	var shown []*candidate
	var cards []domain.Card
	for _, c := range a.considered {
		if c.laned && !c.foreign && c.lane.Lane != domain.LaneInspectorOnly && c.lane.RenderForm != domain.FormInspectorOnly {
			shown, cards = append(shown, c), append(cards, c.card)
		}
	}
	stale, err := pl.staleCards(ctx, cards)
	if err != nil {
		return err
	}
	for _, c := range shown {
		st := stale[c.card.ID]
		if st == nil {
			continue
		}
		c.stale = st
		c.lane.Salience = max(0, c.lane.Salience-StalePenalty)
		bd := make(map[string]int, len(c.lane.Breakdown)+1)
		maps.Copy(bd, c.lane.Breakdown)
		bd["stale"] = -StalePenalty
		c.lane.Breakdown = bd
		c.scope.Why = append(c.scope.Why, "stale: "+st.Reason)
	}
	return nil
}

// staleCards checks cards' cited code (with a checker) and dates: the stale
// ones, by id.
func (pl *Pipeline) staleCards(ctx context.Context, cards []domain.Card) (map[string]*staleness.Stale, error) {
	var code map[string]*staleness.Stale
	if pl.Freshness != nil && len(cards) > 0 {
		ids := make([]string, len(cards))
		for i, c := range cards {
			ids[i] = c.ID
		}
		var err error
		if code, err = pl.Freshness.Cards(ctx, pl.Store, ids); err != nil {
			return nil, hosterr.Internal(err, "check cited code")
		}
	}
	stamp := pl.stamp()
	var out map[string]*staleness.Stale
	for _, c := range cards {
		if st := staleness.Merge(code[c.ID], staleness.Dates(c, stamp)); st != nil {
			if out == nil {
				out = map[string]*staleness.Stale{}
			}
			out[c.ID] = st
		}
	}
	return out, nil
}

// StaleOf checks cards as a pack would (cited code and dates), for the
// surfaces that show cards outside a pack (hints, hover): the stale ones, by
// id.
func (pl *Pipeline) StaleOf(ctx context.Context, cards []TriggerCard) (map[string]*staleness.Stale, error) {
	dc := make([]domain.Card, len(cards))
	for i, c := range cards {
		dc[i] = c.card()
	}
	return pl.staleCards(ctx, dc)
}

// staleLine is the warning a rendered item carries: the reason (each file
// and its change, or the date) and, for changed code, the short repair.
func staleLine(id string, st *staleness.Stale) string {
	s := " · **stale**: " + oneLine(st.Reason)
	if len(st.Citations) > 0 {
		s += " — re-verify (`palace verify " + id + "`) or demote"
	}
	return s
}
