// Command lanes-go is palace's default lanes decision point written as an
// Extism plugin in plain Go: for each card of the batch it computes the
// salience (fits, relevance, persistence for a relevant card, 30-day
// counts with cooling that a card the request is about never pays and
// that applications offset, and adoption signals), its breakdown, the injection lane and the render form
// exactly as the embedded policies/default lanes.rego does — and, for a
// request that names no task (wake), the card's standing instead. A team
// starts its own lanes rules from here.
//
// Build (Go 1.24+; any module with github.com/extism/go-pdk):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o lanes.wasm .
//
// and drop lanes.wasm into $PALACE_HOME/policies/ or <repo>/.palace/policies/.
package main

import (
	"math"
	"runtime"

	"github.com/extism/go-pdk"
)

type input struct {
	Cards []cardInput
	// Wake is set when the request names no task (a session start): cards
	// are laned by their standing (decideWake).
	Wake bool
	// Config values that are absent or 0 take their defaults (30, 7, 10,
	// 6, 4), as in lanes.rego.
	Config struct {
		GraceDays     float64
		StepDays      float64
		Max           float64
		SkipThreshold float64
		TrimThreshold float64
	}
}

type cardInput struct {
	Card struct {
		ID          []byte // a slice of the input, valid during the call
		Tier        tier
		Canonical   bool // status canonical
		Persistence persistence
		RenderPref  renderPref
	}
	ScopeFit     float64 // 0..30, from the scope point
	OperationFit float64 // 0..20, from the scope point
	Relevance    float64 // 0..1, the host's ranking against the request
	Counts30d    struct {
		Applied, Skipped, Trimmed, Viewed float64
		// Explicit adoption signals from requests like this one.
		Used, Accepted, Rejected, Rollback, Miss float64
	}
	AgeDays float64
}

type persistence uint8

const (
	standard persistence = iota // also any value the rules do not know
	protected
	foundational
)

func persistenceOf(s []byte) persistence {
	switch string(s) {
	case "foundational":
		return foundational
	case "protected":
		return protected
	}
	return standard
}

type tier uint8

const (
	otherTier tier = iota // also any value the rules do not know
	daoTian
	daoRen
	shu
	qi
)

func tierOf(s []byte) tier {
	switch string(s) {
	case "dao_tian":
		return daoTian
	case "dao_ren":
		return daoRen
	case "shu":
		return shu
	case "qi":
		return qi
	}
	return otherTier
}

// wakeTier is a tier's standing in a wake-up pack.
var wakeTier = [...]float64{otherTier: 0, daoTian: 40, daoRen: 20, shu: 10, qi: 5}

type renderPref uint8

const (
	auto renderPref = iota // also any value the rules do not know
	inlineFull
	inlineCompact
	refPreferred
)

func renderPrefOf(s []byte) renderPref {
	switch string(s) {
	case "inline_full":
		return inlineFull
	case "inline_compact":
		return inlineCompact
	case "ref_preferred":
		return refPreferred
	}
	return auto
}

// result is one card's answer; the output maps ID to the rest.
type result struct {
	ID         []byte
	Salience   float64
	Breakdown  breakdown
	Lane       string
	RenderForm string
}

// breakdown holds each term of the salience sum; penalties are negative.
// Adopted and Rejected are written only when they are not 0. A wake-up
// card's (Wake) has Tier and Status in place of OperationFit, Relevance,
// Skipped and Trimmed.
type breakdown struct {
	Wake         bool
	Tier         float64
	Status       float64
	ScopeFit     float64
	OperationFit float64
	Relevance    float64
	Persistence  float64
	Viewed       float64
	Skipped      float64
	Trimmed      float64
	Inactivity   float64
	Adopted      float64
	Rejected     float64
}

// lanes is the exported decision point: JSON in, JSON out, status 0.
//
// It reads its input with the small reader of ../pluginjson and writes its output
// by hand: in a Go guest, encoding/json's reflection, or any parser that
// builds a tree, costs more than the decision itself. Its buffers and
// slices are kept from call to call, so a call leaves almost no garbage. It
// ends with runtime.Gosched: a Go plugin's goroutines, the garbage
// collector's among them, run only while an export runs, so a collection
// started during a call finishes only if the call yields; without it
// garbage piles up until the instance runs out of memory (see
// plugins/README.md).
//
//go:wasmexport lanes
func lanes() int32 {
	defer runtime.Gosched()
	in, err := parse(readInput())
	if err != nil {
		pdk.SetErrorString("lanes input: " + err.Error())
		return 1
	}
	pdk.Output(encode(decide(in)))
	return 0
}

// results is kept from call to call, as parse keeps its parser.
var results []result

// The constants of lanes.rego; its header says why they are these.
const (
	relevancePoints = 60
	// relevantCard is the relevance from which persistence and warming
	// count, onTopic the one from which cooling is waived, worthALine the
	// one a reference line needs.
	relevantCard = 0.3
	onTopic      = 0.5
	worthALine   = 0.2
	// signalFloor is the scoped lane's salience: rejections do not cool a
	// card the request is about below it.
	signalFloor = 45
)

// rejectedCooling bounds the cooling n of rejections: a card the request
// is about is cooled at most down to signalFloor from pre, the sum of its
// other terms.
func rejectedCooling(n, pre, rel float64) float64 {
	if rel >= onTopic {
		return lesser(n, greater(0, pre-signalFloor))
	}
	return n
}

// decide computes each card's result, in input order.
func decide(in input) []result {
	grace, step, maxInactivity := orDefault(in.Config.GraceDays, 30), orDefault(in.Config.StepDays, 7), orDefault(in.Config.Max, 10)
	skipAt, trimAt := orDefault(in.Config.SkipThreshold, 6), orDefault(in.Config.TrimThreshold, 4)
	out := results[:0]
	defer func() { results = out }()
	if in.Wake {
		for _, c := range in.Cards {
			out = append(out, decideWake(c, grace, step, maxInactivity))
		}
		return out
	}
	for _, c := range in.Cards {
		rel, n := c.Relevance, &c.Counts30d
		var bonus float64
		if rel >= relevantCard {
			bonus = persistenceBonus(c.Card.Persistence)
		}
		b := breakdown{
			ScopeFit:     c.ScopeFit,
			OperationFit: c.OperationFit,
			Relevance:    relPoints(rel),
			Persistence:  bonus,
			Viewed:       lesser(n.Viewed, 5),
			// 0 - x, not -x: -x of a zero is -0, which JSON prints as "-0".
			Skipped:    0 - cooling(n.Skipped-n.Applied, skipAt, 15, rel),
			Trimmed:    0 - cooling(n.Trimmed-n.Applied, trimAt, 10, rel),
			Inactivity: 0 - lesser(maxInactivity, greater(0, math.Floor((c.AgeDays-grace)/step))),
			Adopted:    lesser(24, 12*(n.Used+n.Accepted+n.Miss)),
		}
		pre := b.ScopeFit + b.OperationFit + b.Relevance + b.Persistence + b.Viewed + b.Skipped + b.Trimmed + b.Inactivity + b.Adopted
		b.Rejected = 0 - rejectedCooling(lesser(60, 30*(n.Rejected+n.Rollback)), pre, rel)
		sum := pre + b.Rejected
		salience := lesser(100, greater(0, sum))
		lane := laneOf(salience, c.Card.Persistence, rel, c.ScopeFit)
		out = append(out, result{
			ID:         c.Card.ID,
			Salience:   salience,
			Breakdown:  b,
			Lane:       lane,
			RenderForm: renderForm(lane, c.Card.RenderPref),
		})
	}
	return out
}

// decideWake is a card's result in a wake-up pack, as lanes.rego's
// wake_result: its standing — scope fit, tier, canonical status,
// persistence, views, adoption signals and inactivity — and the lane that
// standing earns: core for dao_tian, foundational and protected cards,
// scoped from 20, else inspector_only.
func decideWake(c cardInput, grace, step, maxInactivity float64) result {
	n := &c.Counts30d
	b := breakdown{
		Wake:        true,
		ScopeFit:    c.ScopeFit,
		Tier:        wakeTier[c.Card.Tier],
		Persistence: persistenceBonus(c.Card.Persistence),
		Viewed:      lesser(n.Viewed, 5),
		Inactivity:  0 - lesser(maxInactivity, greater(0, math.Floor((c.AgeDays-grace)/step))),
		Adopted:     lesser(24, 12*(n.Used+n.Accepted+n.Miss)),
	}
	if c.Card.Canonical {
		b.Status = 10
	}
	pre := b.ScopeFit + b.Tier + b.Status + b.Persistence + b.Viewed + b.Inactivity + b.Adopted
	b.Rejected = 0 - rejectedCooling(lesser(60, 30*(n.Rejected+n.Rollback)), pre, 0)
	salience := lesser(100, greater(0, pre+b.Rejected))
	lane := "inspector_only"
	switch {
	case c.Card.Tier == daoTian, c.Card.Persistence != standard:
		lane = "core"
	case salience >= 20:
		lane = "scoped"
	}
	return result{ID: c.Card.ID, Salience: salience, Breakdown: b, Lane: lane, RenderForm: renderForm(lane, c.Card.RenderPref)}
}

// relPoints is relevance × 60 rounded half up on thousandths, as lanes.rego
// computes it.
func relPoints(rel float64) float64 {
	return math.Floor((math.Round(rel*1000)*relevancePoints + 500) / 1000)
}

// cooling is the penalty of n skips or trims (net of applications) against
// threshold, capped; none for a card the request is about.
func cooling(n, threshold, limit, rel float64) float64 {
	if rel >= onTopic {
		return 0
	}
	return lesser(limit, 2*greater(0, n-threshold+1))
}

// lesser and greater are min and max for the finite numbers JSON carries;
// the built-ins also order NaNs and signed zeros, and a Go guest pays a
// call for that.
func lesser(a, b float64) float64 {
	if a < b {
		return a
	}
	return b
}

func greater(a, b float64) float64 {
	if a > b {
		return a
	}
	return b
}

func orDefault(v, def float64) float64 {
	if v == 0 {
		return def
	}
	return v
}

func persistenceBonus(p persistence) float64 {
	switch p {
	case foundational:
		return 20
	case protected:
		return 10
	}
	return 0
}

// laneOf is the lane a salience earns; a foundational or protected card
// that fits here at least as an unscoped card of the repository does
// (scope fit 10) keeps a reference line whatever the request is about.
func laneOf(salience float64, p persistence, rel, scopeFit float64) string {
	relevant := rel >= relevantCard
	switch {
	case salience >= 70, p == foundational && relevant && salience >= 40:
		return "core"
	case salience >= 45, p == protected && relevant && salience >= 40:
		return "scoped"
	case salience >= 36 && rel >= worthALine, p != standard && scopeFit >= 10:
		return "ref_only"
	}
	return "inspector_only"
}

// renderForm applies a card's render_pref to its lane's default form, one
// compact line for core and scoped alike.
func renderForm(lane string, pref renderPref) string {
	switch lane {
	case "core", "scoped":
		switch pref {
		case inlineFull:
			return "inline_full"
		case refPreferred:
			return "ref_only"
		}
		return "inline_compact"
	}
	return lane // ref_only and inspector_only render as themselves
}

// main is required by the Go toolchain; with -buildmode=c-shared it is never
// called.
func main() {}
