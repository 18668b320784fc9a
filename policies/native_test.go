package policies_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/policies"
)

// The Go engine may serve an unmodified embedded default only because it
// answers exactly as the Rego does. These tests generate inputs that walk
// every branch (and the odd corners: bad globs, duplicate intents, mixed
// case, negative and huge counts) and compare the two engines.

func sets(t testing.TB) (native, rego *policies.Set) {
	t.Helper()
	ctx := context.Background()
	// A generous deadline: OPA on a 200-card batch of a loaded 2-core
	// machine can pass the default 100 ms, and a fallback is not a verdict.
	n, err := policies.LoadDefaults(ctx, policies.Options{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	r, err := policies.LoadDefaults(ctx, policies.Options{RegoOnly: true, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return n, r
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func some(r *rand.Rand, pool []string, n int) []string {
	k := r.IntN(n + 1)
	if k == 0 {
		return nil
	}
	out := make([]string, k)
	for i := range out {
		out[i] = pick(r, pool)
	}
	return out
}

var (
	files = []string{"", "store/db.go", "store/sql/query.go", "api/v1/handler.go", "README.md", "main.go",
		"web/src/App.tsx", ".palace/inbox.jsonl", "store/", "a b/c.go", "ünïcode/x.go"}
	globs = []string{"store/**", "store/*", "store/*.go", "**/*.go", "*.go", "**", "api/v?/*.go", "{api,web}/**",
		"web/src/[A-Z]*.tsx", "[", "store/**/query.go", "README.md", "", "a b/*", "ünïcode/**", "**/handler.go"}
	langs   = []string{"", "go", "Go", "GO", "python", "typescript", "rust"}
	fields  = []string{"", "general", "storage", "ui", "sql", "Storage"}
	intents = []string{"refactor", "debug", "test", "review", "migrate", "", "Debug", "db-migrate"}
	tools   = []string{"psql", "go", "npm", "git"}
	// words make queries and statements: stopwords, short words, case,
	// punctuation, underscores, digits and runes that lower-case to ASCII
	// (the Kelvin sign) or to more than one rune (İ).
	words = []string{"SQLite", "sqlite", "wal", "WAL-mode", "lock", "locking", "the", "and", "with", "busy_timeout",
		"db", "go", "Tx(", "ünïcode", "\u212Aelvin", "kelvin", "x2", "a1b", "retry,deadline", "3rd", "use", "\uff37al",
		"İstanbul", "migrate", "psql", "debug", "Debug.", "should", "___", "café", "store/**", "refactor", "review", "git"}
	seps = []string{" ", " ", ", ", "-", "\n", "/", "\t", ".", "🙂"}
)

// text joins up to n random words with random separators.
func text(r *rand.Rand, n int) string {
	var b []byte
	for i := range r.IntN(n + 1) {
		if i > 0 {
			b = append(b, pick(r, seps)...)
		}
		b = append(b, pick(r, words)...)
	}
	return string(b)
}

func genScope(r *rand.Rand, n int) policies.ScopeInput {
	in := policies.ScopeInput{Context: policies.ScopeContext{
		File: pick(r, files), Language: pick(r, langs), Field: pick(r, fields),
		Intents: some(r, intents, 3), Tools: some(r, tools, 2), Query: text(r, 6),
	}}
	if r.IntN(5) == 0 {
		// A request naming no task: nothing of its own but the flag (a
		// team policy may read the flag with other fields set; the
		// engines must agree either way).
		in.Context.Wake = true
		if r.IntN(2) == 0 {
			in.Context = policies.ScopeContext{Wake: true}
		}
	}
	for i := range n {
		in.Cards = append(in.Cards, policies.ScopeCard{
			ID: fmt.Sprintf("kc_%03d", i), Tier: "qi", Status: "promoted", Field: pick(r, fields), Statement: text(r, 12),
			Anchor:    pick(r, []string{"worktree", "repo", "global", ""}),
			Scope:     policies.CardScope{Paths: some(r, globs, 3), Languages: some(r, langs[1:], 2), Fields: some(r, fields[1:], 2)},
			Trigger:   policies.CardTrigger{Intents: some(r, intents, 3), ToolNeeds: some(r, tools, 2)},
			Relevance: relevance(r),
		})
	}
	return in
}

// relevance draws a relevance as the host sends it (three decimals), with
// the policies' thresholds and the ends often.
func relevance(r *rand.Rand) float64 {
	if r.IntN(3) == 0 {
		return pick(r, []float64{0, 0.299, 0.3, 0.499, 0.5, 1})
	}
	return float64(r.IntN(1001)) / 1000
}

func genLanes(r *rand.Rand, n int) policies.LanesInput {
	small := func() int { return r.IntN(12) - 1 }
	in := policies.LanesInput{Config: policies.LanesConfig{
		InactivityGraceDays:     pick(r, []int{0, 0, 10, 30, 45}),
		InactivityStepDays:      pick(r, []int{0, 0, 1, 3, 7, -2}),
		InactivityMax:           pick(r, []int{0, 0, 5, 10, 40}),
		SkipCoolingThreshold30d: pick(r, []int{0, 0, 1, 6}),
		TrimCoolingThreshold30d: pick(r, []int{0, 0, 2, 4}),
	}, Wake: r.IntN(3) == 0}
	for i := range n {
		in.Cards = append(in.Cards, policies.LanesCard{
			Card: policies.LanesCardInfo{
				ID:          fmt.Sprintf("kc_%03d", i),
				Tier:        pick(r, []string{"dao_tian", "dao_ren", "shu", "qi", "", "x"}),
				Status:      pick(r, []string{"promoted", "canonical", "candidate", ""}),
				Persistence: pick(r, []string{"standard", "protected", "foundational", ""}),
				RenderPref:  pick(r, []string{"auto", "inline_full", "inline_compact", "ref_preferred", ""}),
			},
			ScopeFit: r.IntN(31), OperationFit: r.IntN(21), Relevance: relevance(r),
			Counts30d: policies.Counts30d{Applied: small(), Skipped: small(), Trimmed: small(), Viewed: small()},
			AgeDays:   pick(r, []int{0, 1, 29, 30, 36, 37, 44, 100, 1000, 100000}),
		})
		// Adoption signals on a third of the cards, negative counts included
		// (the policies must agree on any input).
		if r.IntN(3) == 0 {
			c := &in.Cards[len(in.Cards)-1].Counts30d
			sig := func() int { return r.IntN(5) - 1 }
			c.Used, c.Accepted, c.Rejected, c.Rollback, c.Miss, c.Contradiction = sig(), sig(), sig(), sig(), sig(), sig()
		}
	}
	return in
}

func TestNativeMatchesRego(t *testing.T) {
	native, rego := sets(t)
	for _, p := range []policies.Point{policies.Scope, policies.Lanes, policies.Mailbox} {
		if n, _ := native.Served(p); n.Engine != policies.EngineGo {
			t.Fatalf("%s: default served by %q, want go", p, n.Engine)
		}
		if r, _ := rego.Served(p); r.Engine != policies.EngineRego {
			t.Fatalf("%s: RegoOnly served by %q", p, r.Engine)
		}
	}
	ctx := context.Background()
	r := rand.New(rand.NewPCG(1, 2))
	// ops counts results by operation fit (0, between, the cap), and lines
	// counts results by why line, so the generator is seen to reach every
	// operation-fit branch and the scope branches that the why lines alone
	// tell apart.
	var ops [3]int
	lines := map[string]int{}
	// laned counts lanes results by request kind (wake or not) and lane,
	// and the references a standing card keeps on its scope alone.
	laned := map[string]int{}
	branches := []string{"the request matches its scope", "unscoped:", "card field", "so it could apply", "matches none of",
		"but the request is about the card", "is not one of", "trigger intents", "tool needs", "no task is named"}
	for batch := range 400 {
		sin := genScope(r, 1+r.IntN(12))
		gotN, dn := native.Scope(ctx, sin)
		for _, res := range gotN {
			switch {
			case res.OperationFit == 0:
				ops[0]++
			case res.OperationFit == 20:
				ops[2]++
			default:
				ops[1]++
			}
			for _, w := range res.Why {
				for _, b := range branches {
					if strings.Contains(w, b) {
						lines[b]++
					}
				}
			}
		}
		gotR, dr := rego.Scope(ctx, sin)
		if dn.Fallback != "" || dr.Fallback != "" {
			t.Fatalf("batch %d: fallback %q / %q", batch, dn.Fallback, dr.Fallback)
		}
		if !reflect.DeepEqual(gotN, gotR) {
			for id := range gotR {
				if !reflect.DeepEqual(gotN[id], gotR[id]) {
					t.Fatalf("scope batch %d card %s\ncontext %+v\ncard %+v\ngo   %+v\nrego %+v", batch, id, sin.Context, findCard(sin, id), gotN[id], gotR[id])
				}
			}
			t.Fatalf("scope batch %d: outputs differ", batch)
		}
		lin := genLanes(r, 1+r.IntN(12))
		lanesN, _ := native.Lanes(ctx, lin)
		lanesR, dr := rego.Lanes(ctx, lin)
		if dr.Fallback != "" {
			t.Fatalf("lanes batch %d fell back: %s", batch, dr.Fallback)
		}
		if !reflect.DeepEqual(lanesN, lanesR) {
			for id := range lanesR {
				if !reflect.DeepEqual(lanesN[id], lanesR[id]) {
					t.Fatalf("lanes batch %d card %s config %+v wake %v\ngo   %+v\nrego %+v", batch, id, lin.Config, lin.Wake, lanesN[id], lanesR[id])
				}
			}
			t.Fatalf("lanes batch %d: outputs differ", batch)
		}
		for _, c := range lin.Cards {
			res := lanesR[c.Card.ID]
			laned[fmt.Sprintf("wake=%v %s", lin.Wake, res.Lane)]++
			if !lin.Wake && res.Lane == "ref_only" && c.Relevance < 0.2 {
				laned["standing reference"]++
			}
		}
	}
	for _, want := range []string{"wake=true core", "wake=true scoped", "wake=true inspector_only", "wake=false core", "wake=false scoped",
		"wake=false ref_only", "wake=false inspector_only", "standing reference"} {
		if laned[want] < 30 {
			t.Errorf("only %d generated lanes results are %q: the generator misses that branch", laned[want], want)
		}
	}
	for n, k := range ops {
		if k < 100 {
			t.Errorf("only %d generated scope results in operation-fit class %d: the generator misses that branch", k, n)
		}
	}
	for _, b := range branches {
		if lines[b] < 50 {
			t.Errorf("only %d generated scope results say %q: the generator misses that branch", lines[b], b)
		}
	}
}

func findCard(in policies.ScopeInput, id string) policies.ScopeCard {
	for _, c := range in.Cards {
		if c.ID == id {
			return c
		}
	}
	return policies.ScopeCard{}
}

func genGate(r *rand.Rand) policies.GateInput {
	c := func() int { return r.IntN(6) - 1 }
	return policies.GateInput{
		Action:   pick(r, []string{"promote", "promote", "publish", "resolve", "demote", "retire", "delete", ""}),
		Target:   pick(r, []string{"promoted", "canonical", "repo", "global", "worktree", ""}),
		Card:     policies.GateCard{ID: "kc_1", Tier: pick(r, []string{"dao_tian", "dao_ren", "shu", "qi", "", "x"}), Status: "candidate"},
		Counts:   domain.RoleCounts{Supporting: c(), Verification: c(), Teaching: c(), Counterexample: pick(r, []int{0, 0, 0, 1, 2, -1})},
		Reviewer: policies.Reviewer{Name: "r", Type: pick(r, []string{"human", "agent", ""})},
		Mode:     "human",
		Newest:   policies.RoleTimes{Verification: pick(r, []string{"", "2026-01-01T00:00:00.000Z", "2026-03-01T00:00:00.000Z"})},
		Contest:  policies.GateContest{Contested: r.IntN(2) == 0, Since: pick(r, []string{"", "2026-02-01T00:00:00.000Z", "2026-03-01T00:00:00.000Z"})},
		Source: pick(r, []policies.GateSource{{}, {Channel: "local"},
			{Channel: "card_file", Path: ".palace/cards/kc_1.md", Commit: "c0ffee", Upstream: "origin/main", Reviewed: true},
			{Channel: "card_file", Path: ".palace/cards/kc_1.md", Commit: "c0ffee", Upstream: "origin/main"},
			{Channel: "card_file", Path: "p", Commit: "c"}}),
	}
}

func TestNativeGateMatchesRego(t *testing.T) {
	native, rego := sets(t)
	if sv, _ := native.Served(policies.Gate); sv.Engine != policies.EngineGo {
		t.Fatalf("default gate served by %q", sv.Engine)
	}
	ctx := context.Background()
	r := rand.New(rand.NewPCG(3, 4))
	allowed := 0
	for i := range 3000 {
		in := genGate(r)
		gotN, _ := native.Gate(ctx, in)
		gotR, dr := rego.Gate(ctx, in)
		if dr.Error != "" {
			t.Fatalf("rego gate failed: %s", dr.Error)
		}
		if !reflect.DeepEqual(gotN, gotR) {
			t.Fatalf("input %d %+v\ngo   %+v\nrego %+v", i, in, gotN, gotR)
		}
		if gotN.Allow {
			allowed++
		}
	}
	if allowed < 100 {
		t.Fatalf("only %d of 3000 generated inputs allowed: the generator misses the allow paths", allowed)
	}
}
