// Command lanes-go is palace's default lanes decision point written as an
// Extism plugin in plain Go: for each card of the batch it computes the
// salience, its breakdown, the injection lane and the render form exactly as
// the embedded policies/default lanes.rego does.
//
// Build (Go 1.24+; any module with github.com/extism/go-pdk):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o lanes.wasm .
//
// and drop lanes.wasm into $PALACE_HOME/policies/ or <repo>/.palace/policies/.
package main

import (
	"fmt"
	"math"
	"runtime"

	"github.com/extism/go-pdk"
)

type input struct {
	Cards []cardInput
	// Config values that are absent or 0 take their defaults (30, 7, 10),
	// as in lanes.rego.
	Config struct {
		GraceDays float64
		StepDays  float64
		Max       float64
	}
}

type cardInput struct {
	Card struct {
		ID          string
		Persistence string // standard | protected | foundational
		RenderPref  string // auto | inline_full | inline_compact | ref_preferred
	}
	ScopeFit     float64 // 0..30, from the scope point
	OperationFit float64 // 0..20, from the scope point
	Relevance    float64 // not used by the default rules
	Counts30d    struct {
		Applied float64
		Skipped float64
		Trimmed float64
		Viewed  float64
	}
	AgeDays float64
}

// result is one card's answer; the output maps ID to the rest.
type result struct {
	ID         string
	Salience   float64
	Breakdown  breakdown
	Lane       string
	RenderForm string
}

// breakdown holds each term of the salience sum; penalties are negative.
type breakdown struct {
	ScopeFit     float64
	OperationFit float64
	Persistence  float64
	Applied      float64
	Viewed       float64
	Skipped      float64
	Trimmed      float64
	Inactivity   float64
}

// lanes is the exported decision point: JSON in, JSON out, status 0.
//
// It reads its input with fastjson and writes its output by hand: in a Go
// guest, encoding/json's reflection costs more than the decision itself.
// Its buffers, parser and result slice are kept from call to call, so a
// call leaves little garbage. It ends with runtime.Gosched: a Go plugin's
// goroutines, the garbage collector's among them, run only while an export
// runs, so a collection started during a call finishes only if the call
// yields; without it garbage piles up until the instance runs out of
// memory (see plugins/README.md).
//
//go:wasmexport lanes
func lanes() int32 {
	defer runtime.Gosched()
	in, err := parse(readInput())
	if err != nil {
		pdk.SetError(fmt.Errorf("lanes input: %w", err))
		return 1
	}
	pdk.Output(encode(decide(in)))
	return 0
}

// results is kept from call to call, as parse keeps its parser.
var results []result

// decide computes each card's result, in input order.
func decide(in input) []result {
	grace, step, maxInactivity := orDefault(in.Config.GraceDays, 30), orDefault(in.Config.StepDays, 7), orDefault(in.Config.Max, 10)
	out := results[:0]
	defer func() { results = out }()
	for _, c := range in.Cards {
		b := breakdown{
			ScopeFit:     c.ScopeFit,
			OperationFit: c.OperationFit,
			Persistence:  persistenceBonus(c.Card.Persistence),
			Applied:      math.Min(c.Counts30d.Applied*2, 10),
			Viewed:       math.Min(c.Counts30d.Viewed, 5),
			// 0 - x, not -x: -x of a zero is -0, which JSON prints as "-0".
			Skipped:    0 - math.Min(c.Counts30d.Skipped*2, 15),
			Trimmed:    0 - math.Min(c.Counts30d.Trimmed*2, 10),
			Inactivity: 0 - math.Min(maxInactivity, math.Max(0, math.Floor((c.AgeDays-grace)/step))),
		}
		sum := b.ScopeFit + b.OperationFit + b.Persistence + b.Applied + b.Viewed + b.Skipped + b.Trimmed + b.Inactivity
		salience := math.Min(100, math.Max(0, sum))
		lane := laneOf(salience, c.Card.Persistence)
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

func orDefault(v, def float64) float64 {
	if v == 0 {
		return def
	}
	return v
}

func persistenceBonus(p string) float64 {
	switch p {
	case "foundational":
		return 20
	case "protected":
		return 10
	}
	return 0
}

func laneOf(salience float64, persistence string) string {
	switch {
	case persistence == "foundational" && salience >= 40, salience >= 70:
		return "core"
	case salience >= 45:
		return "scoped"
	case salience >= 20:
		return "ref_only"
	}
	return "inspector_only"
}

func renderForm(lane, pref string) string {
	switch lane {
	case "core":
		switch pref {
		case "inline_compact":
			return "inline_compact"
		case "ref_preferred":
			return "ref_only"
		}
		return "inline_full"
	case "scoped":
		switch pref {
		case "inline_full":
			return "inline_full"
		case "ref_preferred":
			return "ref_only"
		}
		return "inline_compact"
	}
	return lane // ref_only and inspector_only render as themselves
}

// main is required by the Go toolchain; with -buildmode=c-shared it is never
// called.
func main() {}
