// Command gate-go is palace's default gate decision point written as an
// Extism plugin in plain Go: it answers exactly what the embedded
// policies/default gate.rego answers, and is the starting point for a team
// that prefers Go to Rego for its own gate.
//
// Build (Go 1.24+; any module with github.com/extism/go-pdk):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o gate.wasm .
//
// and drop gate.wasm into $PALACE_HOME/policies/ or <repo>/.palace/policies/.
package main

import (
	"runtime"
	"slices"
	"strconv"

	"github.com/extism/go-pdk"
)

// input is the gate decision point's input (policies/README.md).
type input struct {
	Action string // promote | publish | resolve | demote | retire
	Target string // promoted | canonical | repo | global
	Card   struct {
		ID   string
		Tier string // dao_tian | dao_ren | shu | qi
	}
	// Counts are numbers in JSON; float64 keeps any value the host sends.
	Counts struct {
		Supporting     float64
		Verification   float64
		Teaching       float64
		Counterexample float64
	}
	// Newest.Verification is the newest verification's time and
	// Contest.Since when the card's open contest began (RFC3339 UTC times,
	// which compare as strings); resolve reads them.
	Newest struct {
		Verification string
	}
	Contest struct {
		Since string
	}
	Reviewer struct {
		Name string
		Type string // human | agent
	}
	Mode string
	// Source says where the change comes from: "local", or "card_file"
	// for a card file palace sync imports, with the commit that last
	// changed it and whether that commit is on the upstream default branch.
	Source struct {
		Channel, Path, Commit, Upstream string
		Reviewed                        bool
	}
}

type output struct {
	Allow   bool
	Reasons []string           // sorted, no duplicates
	Missing map[string]float64 // roles short of their threshold
}

// rule is one promotion threshold set.
type rule struct {
	supporting, verification, teaching float64
	human                              bool // the reviewer must be a human
}

// promoteRules are the default thresholds, keyed by tier and target.
var promoteRules = map[[2]string]rule{
	{"dao_tian", "canonical"}: {3, 2, 1, true},
	{"dao_ren", "promoted"}:   {2, 1, 0, false},
	{"shu", "promoted"}:       {1, 1, 0, false},
	{"qi", "promoted"}:        {1, 1, 0, false},
	{"dao_ren", "canonical"}:  {3, 2, 0, true},
	{"shu", "canonical"}:      {2, 2, 0, true},
	{"qi", "canonical"}:       {2, 2, 0, true},
}

// gate is the exported decision point: JSON in, JSON out, status 0.
//
// It reads its input with the small reader of ../pluginjson and writes its output
// by hand: in a Go guest, encoding/json's reflection costs more than the
// decision itself.
// It ends with runtime.Gosched: a Go plugin's goroutines, the garbage
// collector's among them, run only while an export runs, so a collection
// started during a call finishes only if the call yields (see
// plugins/README.md).
//
//go:wasmexport gate
func gate() int32 {
	defer runtime.Gosched()
	in, err := parse(pdk.Input())
	if err != nil {
		pdk.SetErrorString("gate input: " + err.Error())
		return 1
	}
	pdk.Output(encode(decide(in)))
	return 0
}

func decide(in input) output {
	out := output{Reasons: []string{}, Missing: map[string]float64{}}
	if in.Source.Channel == "card_file" && !in.Source.Reviewed {
		up := in.Source.Upstream
		if up == "" {
			up = "none found"
		}
		out.Reasons = append(out.Reasons, "source: card file "+in.Source.Path+" comes from commit "+in.Source.Commit+
			", which is not on the upstream default branch ("+up+"): a file's claim counts only from the team's reviewed history")
		return out
	}
	switch in.Action {
	case "promote":
		promote(in, &out)
	case "publish":
		publish(in, &out)
	case "resolve":
		resolve(in, &out)
	case "demote":
		if n := in.Counts.Counterexample; n > 0 {
			out.Allow = true
			out.Reasons = append(out.Reasons, "demote: "+num(n)+" counterexample(s) on record")
		} else {
			out.Reasons = append(out.Reasons, "demote: needs a counterexample on record that no newer verification outweighs")
			out.Missing["counterexample"] = 1
		}
	case "retire":
		out.Allow = true
		out.Reasons = append(out.Reasons, "retire: allowed")
	default:
		out.Reasons = append(out.Reasons, "unknown action "+in.Action)
	}
	slices.Sort(out.Reasons)
	out.Reasons = slices.Compact(out.Reasons)
	return out
}

func promote(in input, out *output) {
	tier, target := in.Card.Tier, in.Target
	r, ok := promoteRules[[2]string{tier, target}]
	if !ok {
		out.Reasons = append(out.Reasons, "no gate rule for "+tier+" → "+target)
		return
	}
	for _, c := range []struct {
		role       string
		have, need float64
	}{
		{"supporting", in.Counts.Supporting, r.supporting},
		{"verification", in.Counts.Verification, r.verification},
		{"teaching", in.Counts.Teaching, r.teaching},
	} {
		if c.have < c.need {
			out.Reasons = append(out.Reasons, c.role+": have "+num(c.have)+", need "+num(c.need))
			out.Missing[c.role] = c.need - c.have
		}
	}
	if n := in.Counts.Counterexample; n > 0 {
		out.Reasons = append(out.Reasons, "counterexample: "+num(n)+" on record, any counterexample blocks promotion")
	}
	if r.human && in.Reviewer.Type != "human" {
		out.Reasons = append(out.Reasons, "reviewer: "+tier+" → "+target+" needs a human reviewer")
	}
	out.Allow = len(out.Reasons) == 0
	if out.Allow {
		out.Reasons = append(out.Reasons, tier+" → "+target+": all thresholds met")
	}
}

func publish(in input, out *output) {
	target := in.Target
	if target != "repo" && target != "global" {
		out.Reasons = append(out.Reasons, "no gate rule for publish → "+target)
		return
	}
	if n := in.Counts.Counterexample; n > 0 {
		out.Reasons = append(out.Reasons, "counterexample: "+num(n)+" on record, any counterexample blocks publishing")
	}
	if target == "global" && in.Reviewer.Type != "human" {
		out.Reasons = append(out.Reasons, "reviewer: publish → global needs a human reviewer")
	}
	out.Allow = len(out.Reasons) == 0
	if out.Allow {
		out.Reasons = append(out.Reasons, "publish → "+target+": allowed")
	}
}

// num prints a count the way Rego's sprintf("%v") does: 2, not 2.000000.
func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// main is required by the Go toolchain; with -buildmode=c-shared it is never
// called.
func main() {}

// resolve lets a contested card back into its lanes when a verification was
// recorded after what contested it.
func resolve(in input, out *output) {
	nv, since := in.Newest.Verification, in.Contest.Since
	if nv != "" && nv > since {
		out.Allow = true
		out.Reasons = append(out.Reasons, "resolve: verification of "+nv+" is newer than the contest ("+since+")")
		return
	}
	if nv == "" {
		nv = "none"
	}
	out.Reasons = append(out.Reasons, "resolve: needs a verification recorded after the contest ("+since+"); the newest is "+nv)
	out.Missing["verification"] = 1
}
