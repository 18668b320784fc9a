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
	// Counts are the distinct evidence per role that the gate counts:
	// teaching of human provenance only, counterexamples no newer
	// verification outweighs. AllCounts are before those rules.
	Counts    domain.RoleCounts `json:"counts"`
	AllCounts domain.RoleCounts `json:"all_counts"`
	// SourceRefs are the distinct source_refs per role, sorted.
	SourceRefs SourceRefs `json:"source_refs"`
	// Newest is each role's newest evidence time (RFC3339 UTC with
	// milliseconds, "" for none), comparable as strings.
	Newest   RoleTimes   `json:"newest"`
	Contest  GateContest `json:"contest"`
	Reviewer Reviewer    `json:"reviewer"`
	Source   GateSource  `json:"source"`
}

// GateSource says where a change to a card comes from: "local" or
// "card_file" (imported from git by palace sync); Reviewed says whether the
// commit that last changed the file is in the upstream default branch.
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
	ID          string    `json:"id"`
	Tier        string    `json:"tier"`
	Status      string    `json:"status"`
	Domain      string    `json:"domain"`
	Field       string    `json:"field"`
	Anchor      string    `json:"anchor"`
	Statement   string    `json:"statement"`
	Persistence string    `json:"persistence"`
	Scope       CardScope `json:"scope"` // empty lists when unscoped
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
	// File is the home or repo policy file that decided; FileState, set by
	// the host, is tracked, modified, untracked or home.
	File      string `json:"file,omitempty"`
	FileState string `json:"file_state,omitempty"`
	// Error is set when the policy failed (gate: a deny); Fallback when
	// the embedded default decided instead, naming the policy and why.
	Error    string `json:"error,omitempty"`
	Fallback string `json:"policy_fallback,omitempty"`
}

// Gate evaluates palace.gate. It fails closed: any failure is a deny whose
// reason names the policy and the problem, with Decision.Error set.
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
