package policies

import "context"

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
	// Wake: the request names no task; an unconfirmed scope earns nothing.
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
	ScopeFit int `json:"scope_fit" policy:"0..30"`
	// OperationFit is -10..20: how closely the card fits what the request
	// is doing: its query's terms, intents and tools; below 0 when the card
	// is about another activity.
	OperationFit int `json:"operation_fit" policy:"-10..20"`
	// Why has at least one line a person can read.
	Why []string `json:"why" policy:"nonempty"`
}

// ScopeOutput maps card id to its result; every input card has one.
type ScopeOutput map[string]ScopeResult

// Scope evaluates palace.scope over a batch. When the serving policy fails,
// the embedded default decides and Decision.Fallback says why.
func (s *Set) Scope(ctx context.Context, in ScopeInput) (ScopeOutput, Decision) {
	d := s.decision(Scope)
	if d.Engine == EngineGo {
		return defaultScope(in), d
	}
	v, err := s.decide(ctx, Scope, in)
	if err == nil {
		var out ScopeOutput
		if out, err = decodeBatch(Scope, v, len(in.Cards), func(i int) string { return in.Cards[i].ID }, decodeScopeResult); err == nil {
			return out, d
		}
	}
	return defaultScope(in), s.fallback(Scope, err)
}
