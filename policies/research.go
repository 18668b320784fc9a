package policies

import (
	"context"
	"fmt"

	"github.com/open-policy-agent/opa/v1/ast"
)

// ResearchInput is the input of palace.research: may a research report be
// handled as asked?
type ResearchInput struct {
	// Action is validate, plan or ingest.
	Action string `json:"action"`
	// DryRun is true when nothing will be written.
	DryRun bool `json:"dry_run"`
	// Mode is human or agent; Actor who asks.
	Mode  string `json:"mode"`
	Actor string `json:"actor"`
	// Anchor is the anchor kind the evidence would land at.
	Anchor string         `json:"anchor"`
	Report ResearchReport `json:"report"`
}

// ResearchReport is what the research point sees of a report.
type ResearchReport struct {
	ReportID string `json:"report_id"`
	Title    string `json:"title"`
	// Findings, Sources and Insights count the report's entries.
	Findings int `json:"findings"`
	Sources  int `json:"sources"`
	Insights int `json:"candidate_insights"`
}

// ResearchOutput is the research point's answer.
type ResearchOutput struct {
	Allow   bool     `json:"allow"`
	Reasons []string `json:"reasons"`
}

// Research evaluates palace.research. It fails closed: a policy error, a
// deadline or a malformed output denies, with a reason naming the policy.
// The embedded default allows every dry run, and writes in human mode only.
func (s *Set) Research(ctx context.Context, in ResearchInput) (ResearchOutput, Decision) {
	d := s.decision(Research)
	v, err := s.decide(ctx, Research, in)
	if err == nil {
		var out ResearchOutput
		obj, ok := v.(ast.Object)
		if !ok {
			err = shapeErr(Research, "", "an object {allow, reasons}", v)
		} else if out, err = decodeResearchOutput(Research, "", obj); err == nil {
			return out, d
		}
	}
	d.Error = err.Error()
	return ResearchOutput{Reasons: []string{fmt.Sprintf("policy %s failed, denying: %v", s.who(Research), err)}}, d
}
