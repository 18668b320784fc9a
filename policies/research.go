package policies

import (
	"context"
	"fmt"

	"github.com/open-policy-agent/opa/v1/ast"
)

// ResearchInput is the input of palace.research: may a research report be
// handled as asked? Validating and planning are dry runs (they write
// nothing); an ingest writes one evidence row per finding.
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
		if out, err = decodeResearch(v); err == nil {
			return out, d
		}
	}
	d.Error = err.Error()
	return ResearchOutput{Reasons: []string{fmt.Sprintf("policy %s failed, denying: %v", s.who(Research), err)}}, d
}

func researchValue(in ResearchInput) ast.Value {
	str := ast.StringTerm
	num := ast.IntNumberTerm
	return ast.NewObject(
		ast.Item(str("action"), str(in.Action)),
		ast.Item(str("dry_run"), ast.BooleanTerm(in.DryRun)),
		ast.Item(str("mode"), str(in.Mode)),
		ast.Item(str("actor"), str(in.Actor)),
		ast.Item(str("anchor"), str(in.Anchor)),
		ast.Item(str("report"), ast.NewTerm(ast.NewObject(
			ast.Item(str("report_id"), str(in.Report.ReportID)),
			ast.Item(str("title"), str(in.Report.Title)),
			ast.Item(str("findings"), num(in.Report.Findings)),
			ast.Item(str("sources"), num(in.Report.Sources)),
			ast.Item(str("candidate_insights"), num(in.Report.Insights)),
		))),
	)
}

func decodeResearch(v ast.Value) (ResearchOutput, error) {
	obj, ok := v.(ast.Object)
	if !ok {
		return ResearchOutput{}, shapeErr(Research, "", "an object {allow, reasons}", v)
	}
	var out ResearchOutput
	var err error
	if out.Allow, err = boolField(Research, "", obj, "allow"); err != nil {
		return out, err
	}
	if out.Reasons, err = stringsField(Research, "", obj, "reasons"); err != nil {
		return out, err
	}
	if out.Reasons == nil {
		out.Reasons = []string{}
	}
	return out, nil
}
