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
// adoption signals of the same window from requests like the current one
// (a signal that names no request counts for every request).
type Counts30d struct {
	Applied int `json:"applied"`
	Skipped int `json:"skipped"`
	Trimmed int `json:"trimmed"`
	Viewed  int `json:"viewed"`
	// Used, Accepted, Rejected, Rollback, Miss and Contradiction count
	// explicit adoption signals (Miss: the card was needed and not given).
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

// LanesConfig tunes cooling and the lanes' sizes. A zero field means its
// default. The cooling fields are the policy's; the limits are enforced by
// the host after the policy has laned every card (a lane's overflow, least
// valuable first, moves down a lane).
type LanesConfig struct {
	// InactivityGraceDays defaults to 30.
	InactivityGraceDays int `json:"inactivity_grace_days"`
	// InactivityStepDays defaults to 7.
	InactivityStepDays int `json:"inactivity_step_days"`
	// InactivityMax defaults to 10.
	InactivityMax int `json:"inactivity_max"`
	// SkipCoolingThreshold30d (6) and TrimCoolingThreshold30d (4) are the
	// 30-day skip and trim counts, net of applications, from which cooling
	// costs salience.
	SkipCoolingThreshold30d int `json:"skip_cooling_threshold_30d"`
	TrimCoolingThreshold30d int `json:"trim_cooling_threshold_30d"`
	// CoreInlineLimit (6), ScopedInlineLimit (8) and RefOnlyLimit (24) cap
	// the items of each lane.
	CoreInlineLimit   int `json:"core_inline_limit"`
	ScopedInlineLimit int `json:"scoped_inline_limit"`
	RefOnlyLimit      int `json:"ref_only_limit"`
	// CompactCharLimit (0: none) caps the statement of a compact line, cut
	// at a word boundary with an ellipsis; the card's id stays on the line
	// so the whole text is one fetch away.
	CompactCharLimit int `json:"compact_char_limit"`
	// FoundationalInlineCharLimit (180) caps the full text of a
	// foundational card rendered in full; a longer one renders compact.
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
	// Wake is set when the request names no task — no query, file,
	// language, field, intent or tool (a session start): relevance then
	// ranks nothing, and the default lanes wake the foundational layer by
	// each card's standing.
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

// Lanes evaluates palace.lanes over a batch. It never fails: when the
// serving policy errors, exceeds its deadline or returns a malformed
// output, the embedded default decides instead and Decision.Fallback says
// why.
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
