package plugins_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/palacehq/palace/plugins"
)

// Targets: a warm lanes call on a 200-card batch ≤ 2 ms; a cold
// Load with a warm disk cache ≤ 30 ms; without a cache a Go guest compiles in
// about a second.

func BenchmarkCallGate(b *testing.B) {
	m := load(b, newRuntime(b, testConfig()), "gate")
	in := []byte(`{"action":"promote","target":"canonical","card":{"id":"kc_01J9Z","tier":"dao_tian","status":"candidate",` +
		`"domain":"project","field":"general","anchor":"repo","statement":"Prefer table-driven tests","persistence":"standard"},` +
		`"counts":{"supporting":2,"verification":2,"teaching":0,"counterexample":0},"reviewer":{"name":"alice","type":"human"},"mode":"human"}`)
	benchCall(b, m, "gate", in)
}

// BenchmarkCallEcho is the fixed cost of a call: a Go guest that copies a
// tiny input to its output.
func BenchmarkCallEcho(b *testing.B) {
	m := load(b, newRuntime(b, testConfig()), "hostile")
	benchCall(b, m, "gate", []byte(`{"do":"echo"}`))
}

func BenchmarkCallLanes200(b *testing.B) {
	m := load(b, newRuntime(b, testConfig()), "lanes")
	in := lanesBatch(200, false)
	b.SetBytes(int64(len(in)))
	benchCall(b, m, "lanes", in)
}

// BenchmarkCallLanes200Slim sends the card fields palace sends a lanes
// policy, not whole cards: a Go guest's cost is mostly moving and decoding
// its input.
func BenchmarkCallLanes200Slim(b *testing.B) {
	m := load(b, newRuntime(b, testConfig()), "lanes")
	in := lanesBatch(200, true)
	b.SetBytes(int64(len(in)))
	benchCall(b, m, "lanes", in)
}

func benchCall(b *testing.B, m *plugins.Module, point string, in []byte) {
	ctx := context.Background()
	if _, err := m.Call(ctx, point, in); err != nil { // warm the instance
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := m.Call(ctx, point, in); err != nil {
			b.Fatal(err)
		}
	}
}

// lanesBatch is a lanes input of n cards laid out as palace writes it
// (policies/wasm_input.go; policies' BenchmarkLanesGoCall200 uses that
// encoder itself): with slim, the card fields palace sends; without, the
// whole card besides.
func lanesBatch(n int, slim bool) []byte {
	type scope struct {
		Paths     []string `json:"paths"`
		Languages []string `json:"languages"`
	}
	type trigger struct {
		Patterns []string `json:"patterns"`
		Intents  []string `json:"intents"`
	}
	type card struct {
		ID          string   `json:"id"`
		Tier        string   `json:"tier"`
		Status      string   `json:"status"`
		Persistence string   `json:"persistence"`
		RenderPref  string   `json:"render_pref"`
		Anchor      string   `json:"anchor"`
		Field       string   `json:"field"`
		Domain      string   `json:"domain,omitempty"`
		Statement   string   `json:"statement,omitempty"`
		Scope       *scope   `json:"scope,omitempty"`
		Trigger     *trigger `json:"trigger,omitempty"`
	}
	type counts struct {
		Applied int `json:"applied"`
		Skipped int `json:"skipped"`
		Trimmed int `json:"trimmed"`
		Viewed  int `json:"viewed"`
	}
	type entry struct {
		Card         card    `json:"card"`
		ScopeFit     int     `json:"scope_fit"`
		OperationFit int     `json:"operation_fit"`
		Relevance    float64 `json:"relevance"`
		Counts30d    counts  `json:"counts30d"`
		AgeDays      int     `json:"age_days"`
	}
	tiers := []string{"dao_tian", "dao_ren", "shu", "qi"}
	pers := []string{"standard", "standard", "protected", "foundational"}
	prefs := []string{"auto", "inline_full", "inline_compact", "ref_preferred"}
	cards := make([]entry, n)
	for i := range cards {
		c := card{
			ID: fmt.Sprintf("kc_01JQ8Z3W5V%016d", i), Tier: tiers[i%4], Status: "promoted", // ids as long as store.NewID's
			Persistence: pers[i%4], RenderPref: prefs[i%4], Anchor: "repo", Field: "testing",
		}
		if !slim {
			c.Domain = "project"
			c.Statement = fmt.Sprintf("Card %d: run the race detector on every package that starts goroutines, and keep test fixtures under testdata/.", i)
			c.Scope = &scope{Paths: []string{"**/*_test.go"}, Languages: []string{"go"}}
			c.Trigger = &trigger{Patterns: []string{`t\.Run\(`}, Intents: []string{"test"}}
		}
		cards[i] = entry{
			Card: c, ScopeFit: i % 31, OperationFit: i % 21, Relevance: 1 / float64(i+3),
			Counts30d: counts{Applied: i % 7, Skipped: i % 5, Trimmed: i % 3, Viewed: i % 11},
			AgeDays:   i % 120,
		}
	}
	b, _ := json.Marshal(struct {
		Cards  []entry        `json:"cards"`
		Config map[string]int `json:"config"`
	}{cards, map[string]int{"inactivity_grace_days": 30, "inactivity_step_days": 7, "inactivity_max": 10}})
	return b
}

// BenchmarkLoadWarmCache is a CLI cold start: a new Runtime loading a Go
// guest whose compiled form is already in the disk cache.
func BenchmarkLoadWarmCache(b *testing.B) {
	wasm := guest(b, "gate")
	cfg := plugins.Config{}.WithCacheDir(filepath.Join(b.TempDir(), "cache"))
	benchLoad(b, cfg, wasm) // fills the cache
	b.ResetTimer()
	for b.Loop() {
		benchLoad(b, cfg, wasm)
	}
}

// BenchmarkLoadNoCache compiles the Go guest from scratch each time.
func BenchmarkLoadNoCache(b *testing.B) {
	wasm := guest(b, "gate")
	for b.Loop() {
		benchLoad(b, plugins.Config{}, wasm)
	}
}

func benchLoad(b *testing.B, cfg plugins.Config, wasm []byte) {
	ctx := context.Background()
	rt, err := plugins.NewRuntime(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := rt.Load(ctx, "gate.wasm", wasm); err != nil {
		b.Fatal(err)
	}
	b.StopTimer() // closing is not part of a cold start
	rt.Close(ctx)
	b.StartTimer()
}

// BenchmarkValidate is the cost of palace's own walk over every section of
// the example plugins, which every Load pays before wazero sees a module.
func BenchmarkValidate(b *testing.B) {
	for _, name := range []string{"gate", "lanes"} {
		b.Run(name, func(b *testing.B) {
			wasm := guest(b, name)
			b.SetBytes(int64(len(wasm)))
			for b.Loop() {
				if err := plugins.Validate(wasm); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
