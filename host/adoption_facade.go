package host

import (
	"context"

	"github.com/palacehq/palace/host/adoption"
	"github.com/palacehq/palace/host/authority"
)

// Adoption signals are package adoption's; host names its types under
// their old names and lends it the secrets intake check and governance's
// contest.

// Signals are the adoption signals, in the order reports list them.
var Signals = adoption.Signals

func (h *Host) adoption() *adoption.Adoption {
	return adoption.New(adoption.Config{
		Store: h.store, Now: h.now, Actor: h.actor, ActorType: h.actorType(), Policies: h.Policies,
		TelemetryDays: h.telemetryDays, RefuseSecrets: refuseSecrets, ChainIDs: h.chainIDs(),
		Contest: func(ctx context.Context, cardID, reason, evidenceID, source string) (bool, error) {
			c, err := h.MarkContested(ctx, cardID, ContestRequest{Kind: authority.ContestContradiction, Reason: reason, EvidenceID: evidenceID, Source: source})
			return c.Contested, err
		},
	})
}

// Adopt checks an adoption signal and records it (see
// adoption.Adoption.Adopt): a signal is evidence, not authority.
func (h *Host) Adopt(ctx context.Context, req adoption.Request) (adoption.Result, error) {
	return h.adoption().Adopt(ctx, req)
}

// AdoptionStats counts the signals matching f per card and per field.
// Read-only, both modes; a bad Since is KindInvalid.
func (h *Host) AdoptionStats(ctx context.Context, f adoption.Filter) (adoption.Stats, error) {
	return h.adoption().Stats(ctx, f)
}

// AdoptionReview is AdoptionStats plus the misses grouped by field, the
// cards turned down and those contradicted (see adoption.Adoption.Review).
func (h *Host) AdoptionReview(ctx context.Context, f adoption.Filter) (adoption.Review, error) {
	return h.adoption().Review(ctx, f)
}
