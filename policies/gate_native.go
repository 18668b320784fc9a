package policies

import (
	"fmt"
	"slices"
)

// gateRule is one row of default/gate.rego's promote_rules.
type gateRule struct {
	supporting, verification, teaching int
	human                              bool
}

// promoteRules[tier][target], as in default/gate.rego.
var promoteRules = map[string]map[string]gateRule{
	"dao_tian": {"canonical": {3, 2, 1, true}},
	"dao_ren":  {"promoted": {2, 1, 0, false}, "canonical": {3, 2, 0, true}},
	"shu":      {"promoted": {1, 1, 0, false}, "canonical": {2, 2, 0, true}},
	"qi":       {"promoted": {1, 1, 0, false}, "canonical": {2, 2, 0, true}},
}

// defaultGate is default/gate.rego in Go; TestNativeMatchesRego holds the
// two identical (change examples/plugins/gate-go with them).
func defaultGate(in GateInput) GateOutput {
	deny := func(reasons ...string) GateOutput {
		slices.Sort(reasons)
		return GateOutput{Allow: false, Reasons: reasons, Missing: map[string]int{}}
	}
	if in.Source.Channel == SourceCardFile && !in.Source.Reviewed {
		up := in.Source.Upstream
		if up == "" {
			up = "none found"
		}
		return deny(fmt.Sprintf("source: card file %s comes from commit %s, which is not on the upstream default branch (%s): a file's claim counts only from the team's reviewed history",
			in.Source.Path, in.Source.Commit, up))
	}
	human := in.Reviewer.Type == "human"
	have := in.Counts
	switch in.Action {
	case "promote":
		rule, ok := promoteRules[in.Card.Tier][in.Target]
		if !ok {
			return deny(fmt.Sprintf("no gate rule for %s → %s", in.Card.Tier, in.Target))
		}
		out := deny()
		need := func(role string, have, want int) {
			if n := want - have; n > 0 {
				out.Missing[role] = n
				out.Reasons = append(out.Reasons, fmt.Sprintf("%s: have %d, need %d", role, have, want))
			}
		}
		need("supporting", have.Supporting, rule.supporting)
		need("verification", have.Verification, rule.verification)
		need("teaching", have.Teaching, rule.teaching)
		if have.Counterexample > 0 {
			out.Reasons = append(out.Reasons, fmt.Sprintf("counterexample: %d on record, any counterexample blocks promotion", have.Counterexample))
		}
		if rule.human && !human {
			out.Reasons = append(out.Reasons, fmt.Sprintf("reviewer: %s → %s needs a human reviewer", in.Card.Tier, in.Target))
		}
		if len(out.Reasons) == 0 {
			return GateOutput{Allow: true, Reasons: []string{fmt.Sprintf("%s → %s: all thresholds met", in.Card.Tier, in.Target)}, Missing: map[string]int{}}
		}
		slices.Sort(out.Reasons)
		return out
	case "publish":
		if in.Target != "repo" && in.Target != "global" {
			return deny(fmt.Sprintf("no gate rule for publish → %s", in.Target))
		}
		var reasons []string
		if have.Counterexample > 0 {
			reasons = append(reasons, fmt.Sprintf("counterexample: %d on record, any counterexample blocks publishing", have.Counterexample))
		}
		if in.Target == "global" && !human {
			reasons = append(reasons, "reviewer: publish → global needs a human reviewer")
		}
		if len(reasons) == 0 {
			return GateOutput{Allow: true, Reasons: []string{fmt.Sprintf("publish → %s: allowed", in.Target)}, Missing: map[string]int{}}
		}
		return deny(reasons...)
	case "resolve":
		nv, since := in.Newest.Verification, in.Contest.Since
		if nv != "" && nv > since {
			return GateOutput{Allow: true, Reasons: []string{fmt.Sprintf("resolve: verification of %s is newer than the contest (%s)", nv, since)}, Missing: map[string]int{}}
		}
		if nv == "" {
			nv = "none"
		}
		return GateOutput{Allow: false, Reasons: []string{fmt.Sprintf("resolve: needs a verification recorded after the contest (%s); the newest is %s", since, nv)}, Missing: map[string]int{"verification": 1}}
	case "demote":
		if have.Counterexample > 0 {
			return GateOutput{Allow: true, Reasons: []string{fmt.Sprintf("demote: %d counterexample(s) on record", have.Counterexample)}, Missing: map[string]int{}}
		}
		return GateOutput{Allow: false, Reasons: []string{"demote: needs a counterexample on record that no newer verification outweighs"}, Missing: map[string]int{"counterexample": 1}}
	case "retire":
		return GateOutput{Allow: true, Reasons: []string{"retire: allowed"}, Missing: map[string]int{}}
	}
	return deny(fmt.Sprintf("unknown action %s", in.Action))
}
