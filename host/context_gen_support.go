package host

import (
	"context"

	"github.com/palacehq/palace/domain"
)

// What the benchmark generator (context_gen.go) reaches for from the days
// when the pack pipeline lived in host; it goes with the generator.

const (
	outcomeInlineFull    = string(domain.OutcomeInlineFull)
	outcomeInlineCompact = string(domain.OutcomeInlineCompact)
	outcomeRefOnly       = string(domain.OutcomeRefOnly)
	outcomeTrimmed       = string(domain.OutcomeTrimmed)
	outcomeSkippedCooled = string(domain.OutcomeSkippedCooled)
	outcomeSkippedScope  = string(domain.OutcomeSkippedScope)
	outcomeViewed        = string(domain.OutcomeViewed)
)

func appendNew(xs []string, x string) []string {
	for _, y := range xs {
		if y == x {
			return xs
		}
	}
	return append(xs, x)
}

// genCandidate and genAssembly are the part of an assembled request the
// generator reads: each considered card's outcome.
type genCandidate struct {
	card    domain.Card
	outcome string
}

type genAssembly struct{ considered []genCandidate }

// assemble assembles r without writing and returns its outcomes.
func (h *Host) assemble(ctx context.Context, r ContextRequest) (genAssembly, error) {
	rows, err := h.pack.Outcomes(ctx, r)
	if err != nil {
		return genAssembly{}, err
	}
	a := genAssembly{considered: make([]genCandidate, len(rows))}
	for i, ev := range rows {
		a.considered[i] = genCandidate{card: domain.Card{ID: ev.CardID}, outcome: ev.Outcome}
	}
	return a, nil
}
