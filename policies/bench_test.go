package policies_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/palacehq/palace/policies"
)

// batch200 is a context request and 200 candidate cards shaped like a real
// palace's: most scoped by path, some by language or field, a few unscoped.
func batch200() policies.ScopeInput {
	r := rand.New(rand.NewPCG(7, 8))
	dirs := []string{"store", "host", "policies", "plugins", "lsp", "mcp", "cmd/palace", "examples"}
	in := policies.ScopeInput{Context: policies.ScopeContext{
		File: "store/sql/query.go", Language: "go", Field: "storage",
		Intents: []string{"refactor", "debug"}, Tools: []string{"psql"}, Query: "transaction retry",
	}}
	for i := range 200 {
		c := policies.ScopeCard{
			ID: fmt.Sprintf("kc_%04d", i), Tier: pick(r, []string{"dao_ren", "shu", "qi", "qi"}), Status: "promoted",
			Field: pick(r, []string{"storage", "general", "ui"}), Persistence: "standard",
			Statement: "Wrap every multi-row write in one transaction and retry on SQLITE_BUSY.",
			Trigger:   policies.CardTrigger{Intents: some(r, []string{"refactor", "debug", "test", "review"}, 2), ToolNeeds: some(r, []string{"psql", "go", "git"}, 1)},
		}
		switch i % 5 {
		case 0, 1, 2:
			c.Scope.Paths = []string{pick(r, dirs) + "/**", "**/" + pick(r, []string{"*.go", "*_test.go", "query.go"})}[:1+r.IntN(2)]
		case 3:
			c.Scope.Languages = []string{pick(r, []string{"go", "rust", "typescript"})}
			c.Scope.Fields = some(r, []string{"storage", "ui"}, 1)
		}
		in.Cards = append(in.Cards, c)
	}
	return in
}

func lanesFor(in policies.ScopeInput, out policies.ScopeOutput) policies.LanesInput {
	var li policies.LanesInput
	for i, c := range in.Cards {
		res := out[c.ID]
		if !res.Applies {
			continue
		}
		li.Cards = append(li.Cards, policies.LanesCard{
			Card:     policies.LanesCardInfo{ID: c.ID, Tier: c.Tier, Status: c.Status, Persistence: c.Persistence, RenderPref: "auto", Field: c.Field},
			ScopeFit: res.ScopeFit, OperationFit: res.OperationFit, Relevance: 0.5,
			Counts30d: policies.Counts30d{Applied: i % 4, Viewed: i % 3, Skipped: i % 2},
			AgeDays:   i % 90,
		})
	}
	return li
}

// BenchmarkScopeLanes200 is one context request's policy work: scope over
// 200 candidates, then lanes over those that apply.
func BenchmarkScopeLanes200(b *testing.B) {
	for _, engine := range []struct {
		name string
		opts policies.Options
	}{{"go", policies.Options{}}, {"rego", policies.Options{RegoOnly: true}}} {
		b.Run(engine.name, func(b *testing.B) {
			set, err := policies.LoadDefaults(context.Background(), engine.opts)
			if err != nil {
				b.Fatal(err)
			}
			in := batch200()
			ctx := context.Background()
			out, d := set.Scope(ctx, in)
			if d.Fallback != "" || d.Engine != engine.name {
				b.Fatalf("scope decision %+v", d)
			}
			li := lanesFor(in, out)
			if len(li.Cards) < 50 {
				b.Fatalf("only %d of 200 cards apply: not a useful batch", len(li.Cards))
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				out, _ := set.Scope(ctx, in)
				if _, d := set.Lanes(ctx, lanesFor(in, out)); d.Fallback != "" {
					b.Fatal(d.Fallback)
				}
			}
		})
	}
}

// BenchmarkReload is what a watcher does after the debounce: read the
// changed files, parse, compile and prepare every point.
func BenchmarkReload(b *testing.B) {
	repo := b.TempDir()
	for _, name := range []string{"gate.rego", "scope.rego", "mailbox.rego", "gate_test.rego", "scope_test.rego", "mailbox_test.rego"} {
		src, err := os.ReadFile(filepath.Join("..", "examples", "team-policies", name))
		if err != nil {
			b.Skipf("example team policies missing: %v", err)
		}
		if err := os.WriteFile(filepath.Join(repo, name), src, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := policies.Load(ctx, policies.Sources{RepoDir: repo}, policies.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
