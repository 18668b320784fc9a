package plugins_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/palacehq/palace/plugins"
)

// Targets (issue 4): a warm lanes call on a 200-card batch ≤ 2 ms; a cold
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

// BenchmarkCallLanes200Slim sends only the card fields the lanes rules read,
// which is what a host that cares about plugin latency should do: a Go
// guest's cost is mostly decoding its input.
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

// lanesBatch is a lanes input of n cards: with slim, only the card fields
// the default rules read; without, the whole card.
func lanesBatch(n int, slim bool) []byte {
	type card map[string]any
	cards := make([]card, n)
	tiers := []string{"dao_tian", "dao_ren", "shu", "qi"}
	pers := []string{"standard", "standard", "protected", "foundational"}
	prefs := []string{"auto", "inline_full", "inline_compact", "ref_preferred"}
	for i := range cards {
		cards[i] = card{
			"card": card{
				"id": fmt.Sprintf("kc_01J9ZK%06d", i), "tier": tiers[i%4], "status": "promoted",
				"domain": "project", "field": "testing", "anchor": "repo",
				"statement":   fmt.Sprintf("Card %d: run the race detector on every package that starts goroutines, and keep test fixtures under testdata/.", i),
				"persistence": pers[i%4], "render_pref": prefs[i%4],
				"scope":   card{"paths": []string{"**/*_test.go"}, "languages": []string{"go"}},
				"trigger": card{"patterns": []string{`t\.Run\(`}, "intents": []string{"test"}},
			},
			"scope_fit": i % 31, "operation_fit": i % 21, "relevance": float64(i%100) / 100,
			"counts30d": card{"applied": i % 7, "skipped": i % 5, "trimmed": i % 3, "viewed": i % 11},
			"age_days":  i % 120,
		}
		if slim {
			c := cards[i]["card"].(card)
			cards[i]["card"] = card{"id": c["id"], "tier": c["tier"], "status": c["status"], "persistence": c["persistence"], "render_pref": c["render_pref"]}
		}
	}
	b, _ := json.Marshal(map[string]any{"cards": cards, "config": map[string]int{"inactivity_grace_days": 30}})
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
