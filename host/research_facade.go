package host

import (
	"context"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/research"
)

// Research ingest is package research; host names its types under their
// old names and lends it the record path's evidence checks and the anchor
// chain.

// MaxReportBytes bounds a research report.
const MaxReportBytes = research.MaxReportBytes

// Research request and result types (see package research).
type (
	ResearchRequest    = research.Request
	ResearchPlan       = research.Plan
	PlannedEvidence    = research.PlannedEvidence
	ResearchSuggestion = research.Suggestion
)

// Research validates a report, plans its ingest, or ingests it (see
// research.Ingester.Research): bad input is KindInvalid and writes
// nothing, a write palace.research refuses is KindMode.
func (h *Host) Research(ctx context.Context, req ResearchRequest) (ResearchPlan, error) {
	return research.New(research.Config{
		Store: h.store, Loc: h.loc, Mode: string(h.mode), Actor: h.actor, Policies: h.Policies,
		PrepareEvidence: func(f research.Finding, k domain.AnchorKind) (domain.Evidence, error) {
			ev, _, err := h.intake().PrepareEvidence(RecordRequest{Content: f.Content, Field: f.Field, Domain: f.Domain, Provenance: "research",
				SourceRef: f.SourceRef, Tags: f.Tags, Anchor: string(k)}, "")
			return ev, err
		},
		ResolveAnchorKind: h.resolveAnchorKind,
		EnsureAnchor:      h.ensureAnchor,
		BatchSize:         BatchSize,
	}).Research(ctx, req)
}
