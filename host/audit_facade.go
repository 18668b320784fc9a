package host

import (
	"context"

	"github.com/palacehq/palace/host/audit"
	"github.com/palacehq/palace/host/teamsync"
)

// The authority audit is package audit's; host names its types under their
// old names, lends it the anchors, contests and policy set, and adds the
// card files held at import (team memory, still host's).

// AuditActions are the governed actions of `palace audit action`.
var AuditActions = audit.Actions

// AuditWarnings are the warning codes an audit row may carry.
var AuditWarnings = audit.Warnings

// AuditReport is the authority audit: every authoritative card with where
// it would land and why (see audit.Report).
type AuditReport struct {
	audit.Report
	// Held are cards of these anchors whose card file claimed promoted or
	// canonical but did not pass the gate at import: they are candidates
	// here, and the reasons say what the gate missed.
	Held []teamsync.HeldCard `json:"held,omitempty"`
}

// Audit lists the authoritative cards of the chosen anchors with lane,
// render form, salience and its breakdown, 30-day counts, review and expiry
// dates, warnings and suggested actions (see audit.Auditor.Audit). It reads
// only; both modes. Unknown filter values are KindInvalid.
func (h *Host) Audit(ctx context.Context, f audit.Filter) (AuditReport, error) {
	var held []teamsync.HeldCard
	rep, err := audit.New(audit.Config{
		Store: h.store, Now: h.now, Loc: h.loc,
		AnchorIDs: func(kind string, allRepos bool) ([]string, error) { return h.crossRepoIDs(ctx, kind, allRepos) },
		Held: func(ctx context.Context, anchorIDs []string) error {
			var err error
			held, err = h.HeldCards(ctx, anchorIDs)
			return err
		},
		OpenContests:   h.openContests,
		PolicySet:      h.pack.PolicySet,
		AnchorRef:      h.anchorRef,
		StampFileState: h.stampFileStateCached,
		Stale:          h.staleCards,
	}).Audit(ctx, f)
	if err != nil {
		return AuditReport{}, err
	}
	return AuditReport{Report: rep, Held: held}, nil
}
