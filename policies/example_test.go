package policies_test

import (
	"context"
	"fmt"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/policies"
)

// Scope and lanes run once per context request over the whole batch.
func ExampleSet_Scope() {
	ctx := context.Background()
	set, err := policies.LoadDefaults(ctx, policies.Options{})
	if err != nil {
		panic(err)
	}
	out, d := set.Scope(ctx, policies.ScopeInput{
		Context: policies.ScopeContext{File: "store/sql/query.go", Language: "go", Intents: []string{"refactor"}, Query: "retry the transaction"},
		Cards: []policies.ScopeCard{
			{ID: "kc_tx", Statement: "Every multi-row write is one transaction", Scope: policies.CardScope{Paths: []string{"store/**"}, Languages: []string{"go"}},
				Trigger: policies.CardTrigger{Intents: []string{"refactor"}}, Relevance: 0.5},
			{ID: "kc_ui", Scope: policies.CardScope{Paths: []string{"web/**"}}},
		},
	})
	for _, id := range []string{"kc_tx", "kc_ui"} {
		r := out[id]
		fmt.Println(id, r.Applies, r.ScopeFit, r.OperationFit)
		for _, w := range r.Why {
			fmt.Println("  " + w)
		}
	}
	fmt.Println("engine:", d.Engine, "source:", d.Source)
	// Output:
	// kc_tx true 24 20
	//   path store/sql/query.go matches store/**
	//   language go is one of go
	//   intent refactor is one of the card's trigger intents
	// kc_ui false 0 0
	//   path store/sql/query.go matches none of web/**
	// engine: go source: embedded
}

func ExampleSet_Lanes() {
	ctx := context.Background()
	set, _ := policies.LoadDefaults(ctx, policies.Options{})
	out, _ := set.Lanes(ctx, policies.LanesInput{Cards: []policies.LanesCard{{
		Card:     policies.LanesCardInfo{ID: "kc_law", Persistence: "foundational", RenderPref: "inline_compact"},
		ScopeFit: 16, OperationFit: 10, Relevance: 0.4,
		Counts30d: policies.Counts30d{Applied: 1, Trimmed: 2},
		AgeDays:   60,
	}}})
	r := out["kc_law"]
	fmt.Println(r.Salience, r.Lane, r.RenderForm, r.Breakdown["inactivity"])
	// Output: 66 core inline_compact -4
}

// The gate answers allow, reasons and what is missing; Decision says which
// policy decided, for the audit trail.
func ExampleSet_Gate() {
	ctx := context.Background()
	set, _ := policies.LoadDefaults(ctx, policies.Options{})
	out, d := set.Gate(ctx, policies.GateInput{
		Action: "promote", Target: "promoted",
		Card:     policies.GateCard{ID: "kc_1", Tier: "dao_ren"},
		Counts:   domain.RoleCounts{Supporting: 2},
		Reviewer: policies.Reviewer{Name: "claude", Type: "agent"},
	})
	fmt.Println(out.Allow, out.Reasons, out.Missing, d.Point.Package(), d.Source)
	// Output: false [verification: have 0, need 1] map[verification:1] palace.gate embedded
}

func ExampleSet_EvalJSON() {
	ctx := context.Background()
	set, _ := policies.LoadDefaults(ctx, policies.Options{})
	_, _, err := set.EvalJSON(ctx, policies.Gate, []byte(`{"action": "promote", "card": {"tags": ["x"]}}`))
	fmt.Println(err)
	// Output: input for palace.gate: unknown field card.tags: palace never sends it, so a policy cannot read it
}
