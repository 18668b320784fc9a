package pack

import (
	"context"
	"time"

	"github.com/palacehq/palace/host/cardview"
	"github.com/palacehq/palace/policies"
	"github.com/palacehq/palace/store"
)

// signalCounts counts, per card, the adoption signals of the cooling window
// that count (cardview.SignalVerdicts) and come from requests like this one
// (sameRequest); the lanes policy reads them beside the injection counts.
func (pl *Pipeline) signalCounts(ctx context.Context, cards []*candidate, signature string, now time.Time) (map[string]policies.Counts30d, error) {
	ids := make([]string, len(cards))
	for i, c := range cards {
		ids[i] = c.card.ID
	}
	sigs, err := pl.Store.CardSignals(ctx, ids, store.FormatTime(now.Add(-cardview.CoolingWindow)))
	if err != nil || len(sigs) == 0 {
		return nil, err
	}
	verdicts := cardview.SignalVerdicts(sigs)
	cur := termSet(signature)
	out := map[string]policies.Counts30d{}
	for i, s := range sigs {
		if verdicts[i] != "" || !sameRequest(s.RequestTerms, cur) {
			continue
		}
		c := out[s.CardID]
		addSignal(&c, s.Signal)
		out[s.CardID] = c
	}
	return out, nil
}

func addSignal(c *policies.Counts30d, signal string) {
	switch signal {
	case "used":
		c.Used++
	case "accepted":
		c.Accepted++
	case "rejected":
		c.Rejected++
	case "rollback":
		c.Rollback++
	case "miss":
		c.Miss++
	case "contradiction":
		c.Contradiction++
	}
}

func withSignals(c, s policies.Counts30d) policies.Counts30d {
	c.Used, c.Accepted, c.Rejected, c.Rollback, c.Miss, c.Contradiction = s.Used, s.Accepted, s.Rejected, s.Rollback, s.Miss, s.Contradiction
	return c
}
