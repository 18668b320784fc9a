package host

import (
	"context"

	"github.com/palacehq/palace/host/ruleexport"
)

// Writing rule files is package ruleexport's; host keeps the old names.

// MaxRuleFileBytes is the largest rule file palace reads (1 MiB).
const MaxRuleFileBytes = ruleexport.MaxRuleFileBytes

// Export request and result types (see package ruleexport).
type (
	ExportRequest = ruleexport.Request
	ExportFile    = ruleexport.File
	ExportLeftOut = ruleexport.LeftOut
	ExportResult  = ruleexport.Result
)

// ExportTargets are the rule-file targets export writes.
func ExportTargets() []string { return ruleexport.Targets() }

// Export writes (or checks, or previews) the repository's authoritative
// cards into the rule files of req.Target (see
// ruleexport.Exporter.Export).
func (h *Host) Export(ctx context.Context, req ExportRequest) (ExportResult, error) {
	return ruleexport.New(ruleexport.Config{Store: h.store, Loc: h.loc, Now: h.now, OpenContests: h.openContests}).Export(ctx, req)
}
