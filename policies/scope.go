package policies

import (
	"context"

	"github.com/open-policy-agent/opa/v1/ast"
)

// ScopeContext is what the request says about where the agent works.
type ScopeContext struct {
	// File is the worktree-relative path the request is about ("" for none).
	File string `json:"file"`
	// Language is an editor language id such as "go" ("" for none).
	Language string `json:"language"`
	// Field is the knowledge field of the request ("" for none).
	Field   string   `json:"field"`
	Intents []string `json:"intents"`
	Tools   []string `json:"tools"`
	// Query is the request's text as given ("" for none); the default
	// counts the terms it shares with each card.
	Query string `json:"query"`
	// Anchors are the anchor ids the request may see; the host has already
	// dropped cards of other anchors before the policy runs.
	Anchors []string `json:"anchors"`
	// Wake is set when the request names no task at all (see
	// LanesInput.Wake): a scope the request cannot confirm earns no points.
	Wake bool `json:"wake"`
}

// CardScope limits where a card applies. An empty list does not limit.
type CardScope struct {
	Paths     []string `json:"paths"`
	Languages []string `json:"languages"`
	Fields    []string `json:"fields"`
}

// CardTrigger are a card's hints about the operations it helps with.
type CardTrigger struct {
	Patterns  []string `json:"patterns"`
	Intents   []string `json:"intents"`
	ToolNeeds []string `json:"tool_needs"`
}

// ScopeCard is the part of a card the scope point sees.
type ScopeCard struct {
	ID          string      `json:"id"`
	Tier        string      `json:"tier"`
	Status      string      `json:"status"`
	Domain      string      `json:"domain"`
	Field       string      `json:"field"`
	Anchor      string      `json:"anchor"`
	Persistence string      `json:"persistence"`
	Statement   string      `json:"statement"`
	Scope       CardScope   `json:"scope"`
	Trigger     CardTrigger `json:"trigger"`
	// Relevance is the host's ranking of the card against the request
	// (query and file), 0..1.
	Relevance float64 `json:"relevance"`
}

// ScopeInput is the input of palace.scope: one request and its whole batch
// of candidate cards (one evaluation per request, never one per card).
type ScopeInput struct {
	Context ScopeContext `json:"context"`
	Cards   []ScopeCard  `json:"cards"`
}

// ScopeResult is the scope point's answer for one card.
type ScopeResult struct {
	Applies bool `json:"applies"`
	// ScopeFit is 0..30: how closely the card's scope fits the request.
	ScopeFit int `json:"scope_fit"`
	// OperationFit is -10..20: how closely the card fits what the request
	// is doing: its query's terms, intents and tools; below 0 when the card
	// is about another activity.
	OperationFit int `json:"operation_fit"`
	// Why has at least one line a person can read.
	Why []string `json:"why"`
}

// ScopeOutput maps card id to its result; every input card has one.
type ScopeOutput map[string]ScopeResult

// Scope evaluates palace.scope over a batch. It never fails: when the
// serving policy errors, exceeds its deadline or returns a malformed
// output, the embedded default decides instead and Decision.Fallback says
// why.
func (s *Set) Scope(ctx context.Context, in ScopeInput) (ScopeOutput, Decision) {
	d := s.decision(Scope)
	if d.Engine == EngineGo {
		return defaultScope(in), d
	}
	out, err := s.scopeRego(ctx, in)
	if err != nil {
		return defaultScope(in), s.fallback(Scope, err)
	}
	return out, d
}

func (s *Set) scopeRego(ctx context.Context, in ScopeInput) (ScopeOutput, error) {
	v, err := s.decide(ctx, Scope, in)
	if err != nil {
		return nil, err
	}
	return decodeScope(v, in.Cards)
}

// scopeValue builds the input as an OPA value directly, skipping the JSON
// round trip rego.EvalInput would make.
func scopeValue(in ScopeInput) ast.Value {
	str := ast.InternedTerm[string]
	cards := make([]*ast.Term, len(in.Cards))
	for i, c := range in.Cards {
		cards[i] = ast.NewTerm(ast.NewObject(
			ast.Item(str("id"), str(c.ID)),
			ast.Item(str("tier"), str(c.Tier)),
			ast.Item(str("status"), str(c.Status)),
			ast.Item(str("domain"), str(c.Domain)),
			ast.Item(str("field"), str(c.Field)),
			ast.Item(str("anchor"), str(c.Anchor)),
			ast.Item(str("persistence"), str(c.Persistence)),
			ast.Item(str("statement"), str(c.Statement)),
			ast.Item(str("scope"), ast.NewTerm(ast.NewObject(
				ast.Item(str("paths"), stringArray(c.Scope.Paths)),
				ast.Item(str("languages"), stringArray(c.Scope.Languages)),
				ast.Item(str("fields"), stringArray(c.Scope.Fields)),
			))),
			ast.Item(str("trigger"), ast.NewTerm(ast.NewObject(
				ast.Item(str("patterns"), stringArray(c.Trigger.Patterns)),
				ast.Item(str("intents"), stringArray(c.Trigger.Intents)),
				ast.Item(str("tool_needs"), stringArray(c.Trigger.ToolNeeds)),
			))),
			ast.Item(str("relevance"), ast.FloatNumberTerm(c.Relevance)),
		))
	}
	x := in.Context
	return ast.NewObject(
		ast.Item(str("context"), ast.NewTerm(ast.NewObject(
			ast.Item(str("file"), str(x.File)),
			ast.Item(str("language"), str(x.Language)),
			ast.Item(str("field"), str(x.Field)),
			ast.Item(str("intents"), stringArray(x.Intents)),
			ast.Item(str("tools"), stringArray(x.Tools)),
			ast.Item(str("query"), str(x.Query)),
			ast.Item(str("anchors"), stringArray(x.Anchors)),
			ast.Item(str("wake"), ast.InternedTerm(x.Wake)),
		))),
		ast.Item(str("cards"), ast.ArrayTerm(cards...)),
	)
}

// stringArray is a string list as an array term; nil becomes [] so policies
// never meet null.
func stringArray(xs []string) *ast.Term {
	ts := make([]*ast.Term, len(xs))
	for i, x := range xs {
		ts[i] = ast.InternedTerm(x)
	}
	return ast.ArrayTerm(ts...)
}

// decodeScope checks the output's shape strictly and that every card of the
// batch has a result.
func decodeScope(v ast.Value, cards []ScopeCard) (ScopeOutput, error) {
	obj, ok := v.(ast.Object)
	if !ok {
		return nil, shapeErr(Scope, "", "an object of card id → result", v)
	}
	out := make(ScopeOutput, len(cards))
	for _, c := range cards {
		rv := obj.Get(ast.InternedTerm(c.ID))
		if rv == nil {
			return nil, shapeErr(Scope, c.ID, "a result (every input card needs one)", nil)
		}
		r, ok := rv.Value.(ast.Object)
		if !ok {
			return nil, shapeErr(Scope, c.ID, "an object", rv.Value)
		}
		var res ScopeResult
		var err error
		if res.Applies, err = boolField(Scope, c.ID, r, "applies"); err != nil {
			return nil, err
		}
		if res.ScopeFit, err = intField(Scope, c.ID, r, "scope_fit", 0, 30); err != nil {
			return nil, err
		}
		if res.OperationFit, err = intField(Scope, c.ID, r, "operation_fit", -10, 20); err != nil {
			return nil, err
		}
		if res.Why, err = stringsField(Scope, c.ID, r, "why"); err != nil {
			return nil, err
		}
		if len(res.Why) == 0 {
			return nil, shapeErr(Scope, c.ID+".why", "a non-empty array of strings (say why)", r.Get(ast.InternedTerm("why")).Value)
		}
		out[c.ID] = res
	}
	return out, nil
}
