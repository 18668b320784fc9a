package pack

import (
	"context"
	"time"

	"github.com/palacehq/palace/host/cardview"
	"github.com/palacehq/palace/policies"
	"github.com/palacehq/palace/store"
)

// addSignals counts into stats, per card, the adoption signals of the
// cooling window that count (cardview.SignalVerdicts) and come from requests
// like this one (sameRequest), beside the injection counts.
func (pl *Pipeline) addSignals(ctx context.Context, cards []*candidate, signature string, now time.Time, stats map[string]coolingStats) error {
	ids := make([]string, len(cards))
	for i, c := range cards {
		ids[i] = c.card.ID
	}
	sigs, err := pl.Store.CardSignals(ctx, ids, store.FormatTime(now.Add(-cardview.CoolingWindow)))
	if err != nil {
		return err
	}
	verdicts := cardview.SignalVerdicts(sigs)
	cur := termSet(signature)
	for i, s := range sigs {
		if verdicts[i] != "" || !sameRequest(s.RequestTerms, cur) {
			continue
		}
		st := stats[s.CardID]
		addSignal(&st.counts, s.Signal)
		stats[s.CardID] = st
	}
	return nil
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
