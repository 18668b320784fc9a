package policies

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/palacehq/palace/domain"
)

// GateInput is the input of palace.gate.
type GateInput struct {
	// Action is "promote" or "publish".
	Action string `json:"action"`
	// Target is the status (promoted, canonical) for promote and the anchor
	// kind (repo, global) for publish.
	Target string `json:"target"`
	// Mode is "human" or "agent".
	Mode string   `json:"mode"`
	Card GateCard `json:"card"`
	// Counts are what the gate counts, per role: distinct evidence (a
	// duplicate counts as its original, a piece of evidence in one role
	// only); teaching counts rows of human provenance only; counterexample
	// counts only counterexamples no newer verification outweighs.
	Counts domain.RoleCounts `json:"counts"`
	// AllCounts are the distinct evidence per role before the provenance
	// and outweighing rules, for policies that want more (or less).
	AllCounts domain.RoleCounts `json:"all_counts"`
	// SourceRefs are the distinct, non-empty source_refs of the card's
	// evidence per role (sorted), so a policy can demand independent
	// sources. Every role is present, empty when it has none.
	SourceRefs SourceRefs `json:"source_refs"`
	// Newest is when the newest evidence of each role was recorded
	// (RFC3339 UTC with milliseconds, "" for none): such strings compare in
	// time order.
	Newest RoleTimes `json:"newest"`
	// Contest says whether the card is contested and since when.
	Contest  GateContest `json:"contest"`
	Reviewer Reviewer    `json:"reviewer"`
	// Source says where the change comes from.
	Source GateSource `json:"source"`
}

// GateSource says where a change to a card comes from: "local" (asked
// for here: the command line, an editor, an agent, the review desk) or
// "card_file" (a card file palace sync imports from git). A file's claims
// are claims: Reviewed says whether the commit that last changed the file
// is contained in the upstream default branch (Upstream), the history a
// team reviews through pull requests.
type GateSource struct {
	Channel  string `json:"channel"`
	Path     string `json:"path"`
	Commit   string `json:"commit"`
	Upstream string `json:"upstream"`
	Reviewed bool   `json:"on_default_branch"`
}

// The channels of GateSource.
const (
	SourceLocal    = "local"
	SourceCardFile = "card_file"
)

// SourceRefs lists distinct source_refs per role.
type SourceRefs struct {
	Supporting     []string `json:"supporting"`
	Verification   []string `json:"verification"`
	Teaching       []string `json:"teaching"`
	Counterexample []string `json:"counterexample"`
}

// RoleTimes holds one timestamp per role.
type RoleTimes struct {
	Supporting     string `json:"supporting"`
	Verification   string `json:"verification"`
	Teaching       string `json:"teaching"`
	Counterexample string `json:"counterexample"`
}

// GateContest describes a card's open contests: Since is the newest of
// their times (the contradicting evidence's when it has one), Kinds their
// distinct kinds, sorted.
type GateContest struct {
	Contested bool     `json:"contested"`
	Since     string   `json:"since"`
	Kinds     []string `json:"kinds"`
}

// GateCard is the part of a card the gate sees.
type GateCard struct {
	ID          string `json:"id"`
	Tier        string `json:"tier"`
	Status      string `json:"status"`
	Domain      string `json:"domain"`
	Field       string `json:"field"`
	Anchor      string `json:"anchor"`
	Statement   string `json:"statement"`
	Persistence string `json:"persistence"`
	// Scope is where the card applies, so a team gate can ask more of cards
	// about sensitive paths. Empty lists when the card is unscoped.
	Scope CardScope `json:"scope"`
}

// Reviewer is who asks for the change: Type is "human" or "agent".
type Reviewer struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// GateOutput is the output of palace.gate.
type GateOutput struct {
	Allow   bool           `json:"allow"`
	Reasons []string       `json:"reasons" policy:"optional"`
	Missing map[string]int `json:"missing" policy:"optional"`
}

// Decision records which policy decided, for the audit trail.
type Decision struct {
	Point   Point  `json:"point"`
	Source  string `json:"source,omitempty"`
	Hash    string `json:"hash,omitempty"`
	SetHash string `json:"set_hash,omitempty"`
	Engine  string `json:"engine,omitempty"`
	// File is the policy file that decided, for a point served from the
	// home or repo source ("" for the embedded defaults).
	File string `json:"file,omitempty"`
	// FileState is how git sees File, set by the host: tracked (as
	// committed), modified, untracked, or home for the palace home's own
	// policies; "" for the embedded defaults.
	FileState string `json:"file_state,omitempty"`
	// Error is set when the policy failed and the result is a fallback
	// (gate: a deny).
	Error string `json:"error,omitempty"`
	// Fallback is set when the serving policy failed and the embedded
	// default decided instead (scope, lanes); it names the policy and why.
	Fallback string `json:"policy_fallback,omitempty"`
}

// Gate evaluates palace.gate. It never returns an error: a missing policy,
// an evaluation error, a deadline or a malformed output is a deny whose
// reason names the policy and the problem (fail closed), with Decision.Error set.
func (s *Set) Gate(ctx context.Context, in GateInput) (GateOutput, Decision) {
	d := s.decision(Gate)
	if d.Engine == EngineGo {
		return defaultGate(in), d
	}
	v, err := s.decide(ctx, Gate, in)
	if err == nil {
		var out GateOutput
		if out, err = decodeGate(v); err == nil {
			return out, d
		}
	}
	d.Error = err.Error()
	return GateOutput{
		Reasons: []string{fmt.Sprintf("policy %s failed, denying: %v", s.who(Gate), err)},
		Missing: map[string]int{},
	}, d
}

func (s *Set) decision(p Point) Decision {
	d := Decision{Point: p, SetHash: s.hash}
	if sv, ok := s.served[p]; ok {
		d.Source, d.Hash, d.Engine = sv.Source, sv.Hash, sv.Engine
		if sv.Source != SourceEmbedded && len(sv.Files) > 0 {
			d.File = sv.Files[0]
		}
	}
	return d
}

// decodeGate checks the output's shape strictly: a policy that answers
// `allow: "true"` is an error, never an allow.
func decodeGate(v ast.Value) (GateOutput, error) {
	obj, ok := v.(ast.Object)
	if !ok {
		return GateOutput{}, shapeErr(Gate, "", "an object", v)
	}
	out, err := decodeGateOutput(Gate, "", obj)
	if err != nil {
		return GateOutput{}, err
	}
	if out.Reasons == nil {
		out.Reasons = []string{}
	}
	if out.Missing == nil {
		out.Missing = map[string]int{}
	}
	if !out.Allow && len(out.Reasons) == 0 {
		out.Reasons = []string{"denied by " + Gate.Package() + " (the policy gave no reason)"}
	}
	sort.Strings(out.Reasons)
	return out, nil
}

// ShapeError says which field of a decision point's output has the wrong type.
type ShapeError struct {
	Point Point
	Field string
	Want  string
	Got   any
}

func (e *ShapeError) Error() string {
	field := "output"
	if e.Field != "" {
		field = "field " + e.Field
	}
	got, _ := json.Marshal(e.Got)
	if v, ok := e.Got.(ast.Value); ok {
		got = []byte(v.String())
	}
	if e.Got == nil {
		got = []byte("nothing")
	}
	return fmt.Sprintf("%s returned a malformed decision: %s must be %s, got %s", e.Point.Package(), field, e.Want, got)
}

func shapeErr(p Point, field, want string, got any) error {
	return &ShapeError{Point: p, Field: field, Want: want, Got: got}
}
