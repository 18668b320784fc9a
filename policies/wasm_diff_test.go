package policies_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/plugins/plugintest"
	"github.com/palacehq/palace/policies"
)

// examples/plugins/gate-go and lanes-go claim to answer exactly what the
// embedded gate.rego and lanes.rego answer. These tests hold them to it on
// generated inputs, through the same Set API palace uses, against OPA
// (RegoOnly, so the Go engine is not what is compared).

// gateCorpus is every tier (and two that have no rule) × every target
// (promote's, publish's, empty and unknown) × every action × every
// reviewer type (missing included), each with 32 seeded draws of the four
// role counts from 0..4, of the newest verification and contest times and
// of where the change comes from: 6·6·5·3·32 = 17,280 inputs.
func gateCorpus() []policies.GateInput {
	r := rand.New(rand.NewPCG(4, 10368))
	stamps := []string{"", "2026-01-01T00:00:00.000Z", "2026-01-02T00:00:00.000Z", "2026-03-01T12:00:00.000Z"}
	sources := []policies.GateSource{{Channel: "local"}, {Channel: "local"},
		{Channel: "card_file", Path: ".palace/cards/kc_d.md", Commit: "c0ffee", Upstream: "origin/main", Reviewed: true},
		{Channel: "card_file", Path: ".palace/cards/kc_d.md", Commit: "c0ffee", Upstream: "origin/main"},
		{Channel: "card_file", Path: "p", Commit: "c"}}
	var out []policies.GateInput
	for _, tier := range []string{"dao_tian", "dao_ren", "shu", "qi", "", "bogus"} {
		for _, target := range []string{"promoted", "canonical", "repo", "global", "", "demoted"} {
			for _, action := range []string{"promote", "publish", "resolve", "demote", "retire"} {
				for _, reviewer := range []policies.Reviewer{{Name: "alice", Type: "human"}, {Name: "claude", Type: "agent"}, {}} {
					for range 32 {
						out = append(out, policies.GateInput{
							Action: action, Target: target, Mode: "human",
							Card: policies.GateCard{ID: "kc_d", Tier: tier, Status: "candidate", Statement: "s",
								Scope: policies.CardScope{Paths: []string{"store/**"}}},
							Counts: domain.RoleCounts{
								Supporting: r.IntN(5), Verification: r.IntN(5),
								Teaching: r.IntN(5), Counterexample: r.IntN(5),
							},
							Reviewer: reviewer,
							Newest:   policies.RoleTimes{Verification: stamps[r.IntN(len(stamps))]},
							Contest:  policies.GateContest{Since: stamps[r.IntN(len(stamps))]},
							Source:   sources[r.IntN(len(sources))],
						})
					}
				}
			}
		}
	}
	return out
}

func TestGateGoMatchesRego(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := policyDir(t, map[string][]byte{"gate.wasm": plugintest.Guest(t, "gate")})
	wasm := load(t, policies.Sources{RepoDir: repo}, wasmOpts())
	opts := wasmOpts()
	opts.RegoOnly = true
	rego := load(t, policies.Sources{}, opts)

	corpus := gateCorpus()
	if len(corpus) < 10000 {
		t.Fatalf("corpus of %d inputs, want at least 10,000", len(corpus))
	}
	var (
		mu      sync.Mutex
		diffs   int
		allowed int
		wg      sync.WaitGroup
	)
	const workers = 2 // the module's pool serves GOMAXPROCS calls at once
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(corpus); i += workers {
				in := corpus[i]
				got, gd := wasm.Gate(ctx, in)
				want, rd := rego.Gate(ctx, in)
				if gd.Engine != policies.EngineWasm || rd.Engine != policies.EngineRego {
					t.Errorf("engines: %s and %s", gd.Engine, rd.Engine)
					return
				}
				mu.Lock()
				if got.Allow {
					allowed++
				}
				if !reflect.DeepEqual(got, want) || gd.Error != "" || rd.Error != "" {
					if diffs++; diffs <= 5 {
						t.Errorf("input %d %+v:\ngate-go %+v %s\nrego    %+v %s", i, in, got, gd.Error, want, rd.Error)
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if diffs > 0 {
		t.Fatalf("%d of %d inputs differ", diffs, len(corpus))
	}
	// A corpus that never allows (or always does) would prove little.
	if allowed < 100 || allowed > len(corpus)-100 {
		t.Fatalf("%d of %d inputs allowed: the corpus does not reach both verdicts", allowed, len(corpus))
	}
	t.Logf("%d gate inputs, %d allowed, 0 differences", len(corpus), allowed)

	// Raw inputs can omit what the typed ones always carry; both engines
	// must still name what was asked for.
	for _, raw := range []map[string]any{
		{"action": "promote", "target": "promoted"},
		{"action": "promote", "card": map[string]any{"tier": "qi"}},
		{"action": "publish"},
		{},
	} {
		got, err := wasm.Eval(ctx, policies.Gate, raw)
		must(t, err)
		want, err := rego.Eval(ctx, policies.Gate, raw)
		must(t, err)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("raw %v:\ngate-go %v\nrego    %v", raw, got, want)
		}
	}
}

// lanesBatch is a generated lanes batch: every persistence and render
// preference, fits across their ranges (and beyond: the lanes rules must
// not assume the scope point's caps), counts from 0 to 12 that cross every
// cap, ages either side of the inactivity grace, and a config that is the
// default, partly set or custom.
func lanesBatch(r *rand.Rand, n int) policies.LanesInput {
	pers := []string{"standard", "protected", "foundational", ""}
	prefs := []string{"auto", "inline_full", "inline_compact", "ref_preferred", ""}
	in := policies.LanesInput{Cards: make([]policies.LanesCard, n), Wake: r.IntN(4) == 0}
	for i := range in.Cards {
		in.Cards[i] = policies.LanesCard{
			Card: policies.LanesCardInfo{ID: fmt.Sprintf("kc_%03d", i), Tier: pick(r, []string{"dao_tian", "dao_ren", "shu", "qi", ""}),
				Status: pick(r, []string{"promoted", "canonical", "candidate"}), Persistence: pick(r, pers), RenderPref: pick(r, prefs)},
			ScopeFit: r.IntN(36), OperationFit: r.IntN(26), Relevance: r.Float64(),
			Counts30d: policies.Counts30d{Applied: r.IntN(13), Skipped: r.IntN(13), Trimmed: r.IntN(13), Viewed: r.IntN(13)},
			AgeDays:   r.IntN(200),
		}
		c := &in.Cards[i]
		if r.IntN(2) == 0 { // the host sends three decimals; other writers may not
			c.Relevance = float64(r.IntN(1001)) / 1000
		}
		if r.IntN(4) == 0 { // adoption signals on a quarter of the cards
			c.Counts30d.Used, c.Counts30d.Accepted, c.Counts30d.Miss = r.IntN(2), r.IntN(2), r.IntN(2)
			c.Counts30d.Rejected, c.Counts30d.Rollback = r.IntN(2), r.IntN(2)
		}
	}
	switch r.IntN(3) {
	case 1:
		in.Config = policies.LanesConfig{InactivityStepDays: 1 + r.IntN(14)}
	case 2:
		in.Config = policies.LanesConfig{InactivityGraceDays: r.IntN(60), InactivityStepDays: 1 + r.IntN(14), InactivityMax: 1 + r.IntN(30),
			SkipCoolingThreshold30d: 1 + r.IntN(10), TrimCoolingThreshold30d: 1 + r.IntN(10)}
	}
	return in
}

func TestLanesGoMatchesRego(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := policyDir(t, map[string][]byte{"lanes.wasm": plugintest.Guest(t, "lanes")})
	wasm := load(t, policies.Sources{RepoDir: repo}, wasmOpts())
	opts := wasmOpts()
	opts.RegoOnly = true
	// lanes-go is the embedded default lanes.rego written in Go.
	rego := load(t, policies.Sources{}, opts)

	r := rand.New(rand.NewPCG(7, 200))
	lanes := map[string]int{}
	cards := 0
	for b := range 60 {
		in := lanesBatch(r, 1+r.IntN(200))
		got, gd := wasm.Lanes(ctx, in)
		want, rd := rego.Lanes(ctx, in)
		if gd.Engine != policies.EngineWasm || gd.Fallback != "" || rd.Engine != policies.EngineRego || rd.Fallback != "" {
			t.Fatalf("batch %d: decisions %+v and %+v", b, gd, rd)
		}
		if !reflect.DeepEqual(got, want) {
			for id := range want {
				if !reflect.DeepEqual(got[id], want[id]) {
					t.Fatalf("batch %d card %s:\nlanes-go %+v\nrego     %+v", b, id, got[id], want[id])
				}
			}
			t.Fatalf("batch %d: outputs differ", b)
		}
		for _, res := range want {
			lanes[string(res.Lane)+"/"+string(res.RenderForm)]++
			if in.Wake {
				lanes["wake "+string(res.Lane)]++
			}
		}
		cards += len(in.Cards)
	}
	// Every lane and every render form a lane can take must have been met.
	for _, want := range []string{"core/inline_full", "core/inline_compact", "core/ref_only", "scoped/inline_compact",
		"scoped/inline_full", "scoped/ref_only", "ref_only/ref_only", "inspector_only/inspector_only",
		"wake core", "wake scoped", "wake inspector_only"} {
		if lanes[want] == 0 {
			t.Errorf("no card reached %s: widen the generator", want)
		}
	}
	t.Logf("%d cards in 60 batches, 0 differences; lanes %v", cards, lanes)
}
