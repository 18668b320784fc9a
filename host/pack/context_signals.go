package pack

import (
	"context"
	"fmt"
	"time"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/policies"
	"github.com/palacehq/palace/store"
)

// SignalsPerCardDay is how many adoption signals of one actor type (agent,
// human) count on one card per UTC day. Past it a signal is recorded and
// counts nowhere, so no one can move a card by repeating themselves under
// new names or new requests.
const SignalsPerCardDay = 3

// Why a recorded signal does not count (SignalVerdicts).
const (
	// NotCountedRepeat: the same actor signalled the same card for the same
	// request before, within the cooling window.
	NotCountedRepeat = "repeat"
	// NotCountedDailyLimit: SignalsPerCardDay signals of the actor's type
	// counted on the card that day already.
	NotCountedDailyLimit = "daily_limit"
)

// SignalVerdicts says, for each of sigs (oldest first, as
// store.CardSignals reads them), why it does not count, "" when it counts.
// The rule: a signal counts once per (actor, card, request) — the request
// id, else the request's terms, else none — and at most SignalsPerCardDay
// signals count per card per UTC day per actor type, the first ones.
// Neutral signals and those naming no card take no place and are never
// refused here (they count nowhere anyway). The rule reads only the rows,
// so every reader applies it alike.
func SignalVerdicts(sigs []store.CardSignal) []string {
	out := make([]string, len(sigs))
	seen := map[[3]string]bool{}
	perDay := map[[3]string]int{}
	for i, s := range sigs {
		if s.CardID == "" || s.Signal == "neutral" {
			continue
		}
		req := s.RequestID
		if req == "" && s.RequestTerms != "" {
			req = "terms:" + s.RequestTerms
		}
		key := [3]string{s.Actor, s.CardID, req}
		if seen[key] {
			out[i] = NotCountedRepeat
			continue
		}
		day := [3]string{s.CardID, s.CreatedAt[:min(10, len(s.CreatedAt))], string(s.ActorType)}
		if perDay[day] >= SignalsPerCardDay {
			out[i] = NotCountedDailyLimit
			continue
		}
		seen[key] = true
		perDay[day]++
	}
	return out
}

// NotCountedReason says in a sentence why a signal of actorType on card
// does not count (verdict from SignalVerdicts), "" when it counts.
func NotCountedReason(verdict, card string, actorType domain.ActorType) string {
	switch verdict {
	case NotCountedRepeat:
		return fmt.Sprintf("a repeat: this actor signalled %s for this request already, and a signal counts once per actor, card and request; it is recorded and counts nowhere", card)
	case NotCountedDailyLimit:
		return fmt.Sprintf("over the daily limit: %d %s signals count on %s per day; it is recorded and counts nowhere", SignalsPerCardDay, actorType, card)
	}
	return ""
}

// signalCounts counts, per card, the adoption signals of the cooling
// window that count (SignalVerdicts) and come from requests like this one
// (signature): a signal that names no request counts for every request.
// The counts go to the lanes policy beside the injection counts; neutral
// signals count nowhere.
func (pl *Pipeline) signalCounts(ctx context.Context, cards []*candidate, signature string, now time.Time) (map[string]policies.Counts30d, error) {
	ids := make([]string, len(cards))
	for i, c := range cards {
		ids[i] = c.card.ID
	}
	sigs, err := pl.store.CardSignals(ctx, ids, store.FormatTime(now.Add(-CoolingWindow)))
	if err != nil || len(sigs) == 0 {
		return nil, err
	}
	verdicts := SignalVerdicts(sigs)
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

// addSignal counts one signal into c.
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

// withSignals is c with the signal counts of s.
func withSignals(c, s policies.Counts30d) policies.Counts30d {
	c.Used, c.Accepted, c.Rejected, c.Rollback, c.Miss, c.Contradiction = s.Used, s.Accepted, s.Rejected, s.Rollback, s.Miss, s.Contradiction
	return c
}
