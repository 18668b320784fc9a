package host

import (
	"context"

	"github.com/palacehq/palace/host/ruleexport"
)

// Writing rule files is package ruleexport's; host keeps the old names.

// ExportTargets are the rule-file targets export writes.
func ExportTargets() []string { return ruleexport.Targets() }

// Export writes (or checks, or previews) the repository's authoritative
// cards into the rule files of req.Target (see
// ruleexport.Exporter.Export).
func (h *Host) Export(ctx context.Context, req ruleexport.Request) (ruleexport.Result, error) {
	return ruleexport.New(ruleexport.Config{Store: h.store, Loc: h.loc, Now: h.now, OpenContests: h.openContests}).Export(ctx, req)
}
