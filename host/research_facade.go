package host

import (
	"context"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/intake"
	"github.com/palacehq/palace/host/research"
)

// Research ingest is package research; host names its types under their
// old names and lends it the record path's evidence checks and the anchor
// chain.

// Research validates a report, plans its ingest, or ingests it (see
// research.Ingester.Research): bad input is KindInvalid and writes
// nothing, a write palace.research refuses is KindMode.
func (h *Host) Research(ctx context.Context, req research.Request) (research.Plan, error) {
	plan, err := h.research().Research(ctx, req)
	if err != nil || len(plan.Suggestions) == 0 || !h.loc.InGit && plan.Anchor != string(domain.AnchorGlobal) {
		return plan, err
	}
	// A suggestion is distilled at the plan's anchor: it names the cards
	// there it would nearly repeat.
	x, err := h.nearIndexAt(ctx, AnchorID(h.loc.Identity(domain.AnchorKind(plan.Anchor))), nil)
	if err != nil {
		return plan, err
	}
	for i := range plan.Suggestions {
		s := &plan.Suggestions[i]
		s.NearDuplicates = x.near(s.Statement, func(string) bool { return false })
	}
	return plan, nil
}

func (h *Host) research() *research.Ingester {
	return research.New(research.Config{
		Store: h.store, Loc: h.loc, Mode: string(h.mode), Actor: h.actor, Policies: h.Policies,
		PrepareEvidence: func(f research.Finding, k domain.AnchorKind) (domain.Evidence, error) {
			ev, _, err := h.intake().PrepareEvidence(intake.RecordRequest{Content: f.Content, Field: f.Field, Domain: f.Domain, Provenance: "research",
				SourceRef: f.SourceRef, Tags: f.Tags, Anchor: string(k)}, "")
			return ev, err
		},
		ResolveAnchorKind: h.resolveAnchorKind,
		EnsureAnchor:      h.ensureAnchor,
		BatchSize:         intake.BatchSize,
	})
}
