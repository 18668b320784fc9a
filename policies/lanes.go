package policies

import (
	"context"
	"runtime"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/palacehq/palace/domain"
)

// LanesCardInfo is the part of a card the lanes point sees.
type LanesCardInfo struct {
	ID     string `json:"id"`
	Tier   string `json:"tier"`
	Status string `json:"status"`
	// Persistence is standard, protected or foundational.
	Persistence string `json:"persistence"`
	// RenderPref is auto, inline_full, inline_compact or ref_preferred.
	RenderPref string `json:"render_pref"`
	Anchor     string `json:"anchor"`
	Field      string `json:"field"`
}

// Counts30d are a card's injection outcomes over the last 30 days and the
// explicit adoption signals (Miss: needed and not given) of the same window
// from requests like the current one (or naming none).
type Counts30d struct {
	Applied       int `json:"applied"`
	Skipped       int `json:"skipped"`
	Trimmed       int `json:"trimmed"`
	Viewed        int `json:"viewed"`
	Used          int `json:"used,omitempty"`
	Accepted      int `json:"accepted,omitempty"`
	Rejected      int `json:"rejected,omitempty"`
	Rollback      int `json:"rollback,omitempty"`
	Miss          int `json:"miss,omitempty"`
	Contradiction int `json:"contradiction,omitempty"`
}

// LanesCard is one card of a lanes batch with what scope said about it.
type LanesCard struct {
	Card         LanesCardInfo `json:"card"`
	ScopeFit     int           `json:"scope_fit"`
	OperationFit int           `json:"operation_fit"`
	// Relevance is the host's ranking of the card against the request
	// (query and file under edit), 0..1; part of the default salience.
	Relevance float64   `json:"relevance"`
	Counts30d Counts30d `json:"counts30d"`
	AgeDays   int       `json:"age_days"`
}

// LanesConfig tunes cooling and the lanes' sizes; lanesSettings gives each
// field's default (used for a zero field), range and meaning. The host
// enforces the limits after the policy has laned every card (a lane's
// overflow, least valuable first, moves down a lane).
type LanesConfig struct {
	InactivityGraceDays         int `json:"inactivity_grace_days"`
	InactivityStepDays          int `json:"inactivity_step_days"`
	InactivityMax               int `json:"inactivity_max"`
	SkipCoolingThreshold30d     int `json:"skip_cooling_threshold_30d"`
	TrimCoolingThreshold30d     int `json:"trim_cooling_threshold_30d"`
	CoreInlineLimit             int `json:"core_inline_limit"`
	ScopedInlineLimit           int `json:"scoped_inline_limit"`
	RefOnlyLimit                int `json:"ref_only_limit"`
	CompactCharLimit            int `json:"compact_char_limit"` // 0: none; cut at a word, id kept
	FoundationalInlineCharLimit int `json:"foundational_inline_char_limit"`
}

// DefaultLanesConfig is the configuration every request uses unless a team
// changes it.
func DefaultLanesConfig() LanesConfig { return LanesConfig{}.withDefaults() }

// withDefaults fills zero fields, so every engine (Rego, Go, WASM) sees the
// same numbers.
func (c LanesConfig) withDefaults() LanesConfig {
	for _, s := range lanesSettings {
		if v := s.field(&c); *v == 0 {
			*v = s.def
		}
	}
	return c
}

// LanesInput is the input of palace.lanes: the whole batch of cards that
// apply to one request.
type LanesInput struct {
	Cards  []LanesCard `json:"cards"`
	Config LanesConfig `json:"config"`
	// Wake is set when the request names no task (a session start): the
	// default lanes then rank cards by standing, not relevance.
	Wake bool `json:"wake"`
}

// LaneResult is the lanes point's answer for one card.
type LaneResult struct {
	// Salience is 0..100.
	Salience int `json:"salience" policy:"0..100"`
	// Breakdown holds each term of the salience sum; penalties are negative.
	Breakdown map[string]int `json:"breakdown"`
	// Lane is core, scoped, ref_only or inspector_only.
	Lane domain.Lane `json:"lane" policy:"enum=laneNames"`
	// RenderForm is inline_full, inline_compact, ref_only or inspector_only.
	RenderForm domain.RenderForm `json:"render_form" policy:"enum=renderForms"`
}

// LanesOutput maps card id to its result; every input card has one.
type LanesOutput map[string]LaneResult

// The lanes and render forms.
var (
	laneNames   = domain.Lanes
	renderForms = domain.RenderForms
)

// Lanes evaluates palace.lanes over a batch. When the serving policy fails,
// the embedded default decides and Decision.Fallback says why.
func (s *Set) Lanes(ctx context.Context, in LanesInput) (LanesOutput, Decision) {
	in.Config = in.Config.withDefaults()
	d := s.decision(Lanes)
	if d.Engine == EngineGo {
		return defaultLanes(in), d
	}
	out, err := s.lanesRego(ctx, in)
	if err != nil {
		return defaultLanes(in), s.fallback(Lanes, err)
	}
	return out, d
}

func (s *Set) lanesRego(ctx context.Context, in LanesInput) (LanesOutput, error) {
	if e, ok := s.engines[Lanes].(*wasmEngine); ok {
		out, err := e.lanes(ctx, in)
		runtime.KeepAlive(s) // as decide does
		return out, err
	}
	v, err := s.decide(ctx, Lanes, in)
	if err != nil {
		return nil, err
	}
	return decodeLanes(v, in.Cards)
}

// decodeLanes checks the output's shape strictly and that every card of the
// batch has a result.
func decodeLanes(v ast.Value, cards []LanesCard) (LanesOutput, error) {
	return decodeBatch(Lanes, v, len(cards), func(i int) string { return cards[i].Card.ID }, decodeLaneResult)
}
