package pack

import (
	"context"
	"time"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/cardview"
	"github.com/palacehq/palace/internal/hosterr"
	"github.com/palacehq/palace/policies"
	"github.com/palacehq/palace/store"
)

// coolingStats is what the lanes policy learns about a card's recent life:
// its 30-day counts and the days since it was last applied (ageDays).
type coolingStats struct {
	counts  policies.Counts30d
	ageDays int
}

// coolingGroups are the outcome groups the 30-day counts sum, in the order
// applied, skipped, trimmed, viewed (ref_only cools nothing); appliedOutcomes
// are those whose latest event ends a card's inactivity.
var (
	coolingGroups   = [][]string{{store.OutcomeInlineFull, store.OutcomeInlineCompact}, {store.OutcomeSkippedCooled}, {store.OutcomeTrimmed}, {store.OutcomeViewed}}
	appliedOutcomes = []string{store.OutcomeInlineFull, store.OutcomeInlineCompact}
)

// cooling reads the 30-day counts (counted by UTC day) and the last applied
// time of cards, in one bounded query over the injection rollups.
func (pl *Pipeline) cooling(ctx context.Context, cards []*candidate, now time.Time) (map[string]coolingStats, error) {
	ids := make([]string, len(cards))
	for i, c := range cards {
		ids[i] = c.card.ID
	}
	sums, err := pl.Store.InjectionSummaries(ctx, ids, store.FormatTime(now.Add(-cardview.CoolingWindow)), coolingGroups, appliedOutcomes)
	if err != nil {
		return nil, err
	}
	out := make(map[string]coolingStats, len(cards))
	for _, c := range cards {
		var cs coolingStats
		s, ok := sums[c.card.ID]
		if ok {
			cs.counts = policies.Counts30d{Applied: s.Counts[0], Skipped: s.Counts[1], Trimmed: s.Counts[2], Viewed: s.Counts[3]}
		}
		cs.ageDays = ageDays(s.Latest, c.card, now)
		out[c.card.ID] = cs
	}
	return out, nil
}

// ageDays counts days since the card was last applied, or since it was
// created when it never was.
func ageDays(lastApplied string, c domain.Card, now time.Time) int {
	if lastApplied == "" {
		return cardview.DaysSince(c.CreatedAt, now)
	}
	return cardview.DaysSince(lastApplied, now)
}

// logInjections queues the request's record (store.QueueRequest), which
// the store writes in the background: the request waits for no write lock.
func (pl *Pipeline) logInjections(ctx context.Context, a *assembly) error {
	return pl.RecordInjections(ctx, outcomeRows(a, a.pack.RequestID, store.FormatTime(a.now)), requestTerms(a), "record injection events")
}

// outcomeRows are the events of the considered cards that have an outcome.
func outcomeRows(a *assembly, requestID, stamp string) []store.InjectionEvent {
	var rows []store.InjectionEvent
	for _, c := range a.considered {
		if c.outcome != "" {
			rows = append(rows, store.InjectionEvent{RequestID: requestID, CardID: c.card.ID, Outcome: c.outcome, CreatedAt: stamp})
		}
	}
	return rows
}

// Outcomes assembles req and returns what its request record would hold:
// the outcome of each considered card that has one, in pack order, with
// no request id or time. It writes nothing, whatever req.DryRun says.
func (pl *Pipeline) Outcomes(ctx context.Context, req ContextRequest) ([]store.InjectionEvent, error) {
	a, err := pl.assemble(ctx, req)
	if err != nil {
		return nil, err
	}
	return outcomeRows(a, "", ""), nil
}

// requestTerms is the signature of a logged request, kept so that a signal
// naming its request id is weighed for requests like it; nil without one.
func requestTerms(a *assembly) *store.RequestTerms {
	if a.pack.RequestID == "" || a.signature == "" {
		return nil
	}
	return &store.RequestTerms{RequestID: a.pack.RequestID, Query: a.pack.Request.Query, Terms: a.signature, CreatedAt: store.FormatTime(a.now)}
}

// RecordInjections queues one request's events (and its terms, when
// given) to be written with retention kept going (see
// store.QueueRequest); what names the operation in a KindInternal error.
func (pl *Pipeline) RecordInjections(ctx context.Context, rows []store.InjectionEvent, terms *store.RequestTerms, what string) error {
	if err := pl.Store.QueueRequest(ctx, rows, terms, pl.TelemetryCutoff()); err != nil {
		return hosterr.Internal(err, "%s", what)
	}
	return nil
}

// RecordViews records a "viewed" injection event for each card id (an
// editor listing several cards), which warms its lane a little. Unknown ids
// are KindInvalid and nothing is written.
func (pl *Pipeline) RecordViews(ctx context.Context, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	found, err := pl.Store.CardsByIDs(ctx, ids)
	if err != nil {
		return hosterr.Internal(err, "record views")
	}
	stamp := pl.stamp()
	rows := make([]store.InjectionEvent, 0, len(ids))
	for _, id := range ids {
		if _, ok := found[id]; !ok {
			return hosterr.Invalid("id", "no card %s: list them with `palace card list --anchor all`", id)
		}
		rows = append(rows, store.InjectionEvent{RequestID: "view", CardID: id, Outcome: store.OutcomeViewed, CreatedAt: stamp})
	}
	return pl.RecordInjections(ctx, rows, nil, "record views")
}

// Cooling is a card's 30-day counts and the days since it was last applied
// (or created), from its injection stats over the cooling window and ever,
// as the lanes decision reads them.
func Cooling(window, ever store.InjectionStats, c domain.Card, now time.Time) (policies.Counts30d, int) {
	counts := policies.Counts30d{
		Applied: window.Counts[store.OutcomeInlineFull] + window.Counts[store.OutcomeInlineCompact],
		Skipped: window.Counts[store.OutcomeSkippedCooled],
		Trimmed: window.Counts[store.OutcomeTrimmed],
		Viewed:  window.Counts[store.OutcomeViewed],
	}
	return counts, ageDays(max(ever.Latest[store.OutcomeInlineFull], ever.Latest[store.OutcomeInlineCompact]), c, now)
}
