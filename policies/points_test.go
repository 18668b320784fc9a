package policies_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/palacehq/palace/policies"
)

func loadRepo(t *testing.T, files map[string]string) *policies.Set {
	t.Helper()
	repo := t.TempDir()
	for name, src := range files {
		writePolicy(t, repo, name, src)
	}
	set, err := policies.Load(context.Background(), policies.Sources{RepoDir: repo}, policies.Options{Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return set
}

var storeCard = policies.ScopeCard{
	ID: "kc_store", Tier: "qi", Field: "storage",
	Scope:   policies.CardScope{Paths: []string{"store/**"}, Languages: []string{"go"}},
	Trigger: policies.CardTrigger{Intents: []string{"migrate"}},
}

var uiCard = policies.ScopeCard{ID: "kc_ui", Tier: "shu", Scope: policies.CardScope{Paths: []string{"web/**"}}}

func TestScopeDefault(t *testing.T) {
	for _, opts := range []policies.Options{{}, {RegoOnly: true}} {
		set, err := policies.LoadDefaults(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		in := policies.ScopeInput{
			Context: policies.ScopeContext{File: "store/sql/db.go", Language: "go", Intents: []string{"migrate"}},
			Cards:   []policies.ScopeCard{storeCard, uiCard, {ID: "kc_any"}},
		}
		out, d := set.Scope(context.Background(), in)
		want := map[string]policies.ScopeResult{
			"kc_store": {Applies: true, ScopeFit: 24, OperationFit: 8, Why: []string{
				"path store/sql/db.go matches store/**", "language go is one of go", "intent migrate is one of the card's trigger intents"}},
			"kc_ui":  {Applies: false, ScopeFit: 0, Why: []string{"path store/sql/db.go matches none of web/**"}},
			"kc_any": {Applies: true, ScopeFit: 10, Why: []string{"unscoped: applies everywhere at its anchor"}},
		}
		for id, w := range want {
			got := out[id]
			if got.Applies != w.Applies || got.ScopeFit != w.ScopeFit || got.OperationFit != w.OperationFit || strings.Join(got.Why, "|") != strings.Join(w.Why, "|") {
				t.Errorf("engine %s: %s = %+v, want %+v", d.Engine, id, got, w)
			}
		}
		wantEngine := policies.EngineGo
		if opts.RegoOnly {
			wantEngine = policies.EngineRego
		}
		if d.Engine != wantEngine || d.Source != policies.SourceEmbedded || d.Fallback != "" || d.Hash == "" {
			t.Errorf("decision = %+v", d)
		}
	}
}

// TestScopeOrderings holds the default scope and lanes, through both
// engines, to the orderings the lanes need (default/scope.rego's header):
// a card the request is about is inlined, and more so when its scope is
// confirmed; a card it is not about stays out whatever its scope or
// persistence; a path that misses excludes unless the request is about the
// card.
func TestScopeOrderings(t *testing.T) {
	perfect := policies.ScopeCard{ID: "kc_wal", Field: "storage", Statement: "Open SQLite in WAL mode with a busy timeout",
		Scope: policies.CardScope{Paths: []string{"store/**"}, Languages: []string{"go"}, Fields: []string{"storage"}}}
	law := policies.ScopeCard{ID: "kc_law", Statement: "Never claim absence without looking", Persistence: "foundational",
		Trigger: policies.CardTrigger{Intents: []string{"review"}}}
	plain := policies.ScopeCard{ID: "kc_plain", Statement: "Buttons use the Button component"}
	onTopic := policies.ScopeContext{File: "store/db.go", Language: "go", Field: "storage", Query: "sqlite busy timeout"}
	fieldLaw := policies.ScopeCard{ID: "kc_ev", Persistence: "foundational", Scope: policies.CardScope{Fields: []string{"storage"}},
		Trigger: policies.CardTrigger{Intents: []string{"review"}}}
	pathOnly := policies.ScopeCard{ID: "kc_s", Statement: "Open SQLite in WAL mode", Scope: policies.CardScope{Paths: []string{"store/**"}}}
	testCard := policies.ScopeCard{ID: "kc_t", Statement: "Name the go test that covers a store change", Trigger: policies.CardTrigger{Intents: []string{"test"}}}
	global := policies.ScopeCard{ID: "kc_g", Anchor: "global", Statement: "Keep every change focused", Trigger: policies.CardTrigger{Intents: []string{"refactor"}}}
	tests := []struct {
		name      string
		ctx       policies.ScopeContext
		card      policies.ScopeCard
		relevance float64
		lane      string // "" when the card must not apply
		salience  int
	}{
		// 30 + 10 + 48
		{"perfect fit on-topic is core", onTopic, perfect, 0.8, "core", 88},
		// 30, nothing for relevance: a confirmed scope alone is not worth a line
		{"perfect fit off-topic stays out", onTopic, perfect, 0, "inspector_only", 30},
		{"path miss does not apply", policies.ScopeContext{File: "web/app.ts", Query: "sqlite busy timeout"}, perfect, 0.2, "", 0},
		// language and field could apply (3 + 3) + 7 + 36
		{"path miss the request is about applies", policies.ScopeContext{File: "web/app.ts", Query: "sqlite busy timeout"}, perfect, 0.6, "scoped", 49},
		// 10 + 6 + 30 + 20
		{"foundational unscoped the request is about is core", policies.ScopeContext{Query: "claim"}, law, 0.5, "core", 66},
		// 10 + 8: an intent alone does not make it relevant, and persistence
		// is no pass into the inline lanes; unscoped at the repository, it
		// stays a reference line
		{"foundational unscoped with only an intent stays a reference", policies.ScopeContext{Intents: []string{"review"}}, law, 0, "ref_only", 18},
		{"standard unscoped without overlap stays out", onTopic, plain, 0, "inspector_only", 10},
		// 16 + 20 (an intent the text agrees with, relevance >= 0.2) + 18 + 20
		{"foundational field-scoped in its field is core", policies.ScopeContext{Field: "storage", Intents: []string{"review"}}, fieldLaw, 0.3, "core", 74},
		// 5 + 8 + 42
		{"path-scoped on-topic without a file is scoped", policies.ScopeContext{Query: "sqlite wal"}, pathOnly, 0.7, "scoped", 55},
		// the same card with its path confirmed: 20 + 8 + 42
		{"a confirmed path outranks no file", policies.ScopeContext{File: "store/x.go", Query: "sqlite wal"}, pathOnly, 0.7, "core", 70},
		// 10 + 20 + 15: the request's activity confirms a weakly worded card
		{"an intent the words agree with inlines", policies.ScopeContext{Intents: []string{"test"}}, testCard, 0.25, "scoped", 45},
		// 10 + 3 - 10 + 15: the same card for another activity
		{"another activity stays out", policies.ScopeContext{Intents: []string{"build"}}, testCard, 0.25, "inspector_only", 18},
		// 2 + 20 + 15: a global card needs the request to be about it
		{"a global card weakly matched is a reference", policies.ScopeContext{Intents: []string{"refactor"}}, global, 0.25, "ref_only", 37},
		// 2 + 20 + 24
		{"a global card the request is about inlines", policies.ScopeContext{Intents: []string{"refactor"}}, global, 0.4, "scoped", 46},
	}
	for _, opts := range []policies.Options{{}, {RegoOnly: true}} {
		set, err := policies.LoadDefaults(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, tt := range tests {
			ctx := context.Background()
			card := tt.card
			card.Relevance = tt.relevance
			sout, _ := set.Scope(ctx, policies.ScopeInput{Context: tt.ctx, Cards: []policies.ScopeCard{card}})
			r := sout[tt.card.ID]
			if !r.Applies {
				if tt.lane != "" {
					t.Errorf("%s (rego only %v): does not apply: %v", tt.name, opts.RegoOnly, r.Why)
				}
				continue
			}
			if tt.lane == "" {
				t.Errorf("%s (rego only %v): applies: %v", tt.name, opts.RegoOnly, r.Why)
				continue
			}
			lout, _ := set.Lanes(ctx, policies.LanesInput{Cards: []policies.LanesCard{{
				Card:     policies.LanesCardInfo{ID: tt.card.ID, Persistence: tt.card.Persistence},
				ScopeFit: r.ScopeFit, OperationFit: r.OperationFit, Relevance: tt.relevance,
			}}})
			if l := lout[tt.card.ID]; string(l.Lane) != tt.lane || l.Salience != tt.salience {
				t.Errorf("%s (rego only %v): lane %s salience %d, want %s %d (why %v)", tt.name, opts.RegoOnly, l.Lane, l.Salience, tt.lane, tt.salience, r.Why)
			}
		}
	}
}

func TestLanesDefault(t *testing.T) {
	set, err := policies.LoadDefaults(context.Background(), policies.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out, d := set.Lanes(context.Background(), policies.LanesInput{Cards: []policies.LanesCard{{
		Card:     policies.LanesCardInfo{ID: "kc_1", Persistence: "foundational", RenderPref: "ref_preferred"},
		ScopeFit: 2, OperationFit: 2, Relevance: 0.3, Counts30d: policies.Counts30d{Applied: 1, Skipped: 8}, AgeDays: 51,
	}}})
	got := out["kc_1"]
	// 2 + 2 + 18 + 20 − 2×(8−1−6+1)=4 − floor((51−30)/7)=3 → 35 (being
	// rendered once warms nothing, it only offsets a skip): a relevant
	// foundational card needs 40 for core, a reference line 36.
	if got.Salience != 35 || got.Lane != "inspector_only" || got.RenderForm != "inspector_only" || got.Breakdown["inactivity"] != -3 || got.Breakdown["skipped"] != -4 {
		t.Errorf("lanes = %+v", got)
	}
	if d.Engine != policies.EngineGo || d.Point != policies.Lanes {
		t.Errorf("decision = %+v", d)
	}
}

func TestScopeAndLanesFallBack(t *testing.T) {
	loop := `decision := {c.id: r | some c in input.cards; r := {"applies": count(xs) > 0}} if {
	xs := [x | some i in numbers.range(1, 100000000); x := i * 2]
}`
	tests := []struct {
		name  string
		point policies.Point
		body  string
		want  string
	}{
		{"scope deadline", policies.Scope, loop, "deadline"},
		{"scope applies as string", policies.Scope, `decision := {c.id: {"applies": "yes", "scope_fit": 0, "operation_fit": 0, "why": ["x"]} | some c in input.cards}`,
			`palace.scope returned a malformed decision: field kc_store.applies must be a boolean, got "yes"`},
		{"scope fit out of range", policies.Scope, `decision := {c.id: {"applies": true, "scope_fit": 31, "operation_fit": 0, "why": ["x"]} | some c in input.cards}`,
			"field kc_store.scope_fit must be a whole number 0..30, got 31"},
		{"scope empty why", policies.Scope, `decision := {c.id: {"applies": true, "scope_fit": 1, "operation_fit": 0, "why": []} | some c in input.cards}`,
			"field kc_store.why must be a non-empty array of strings"},
		{"scope card missing", policies.Scope, `decision := {}`, "field kc_store must be a result (every input card needs one)"},
		{"scope undefined", policies.Scope, `decision := 1 if input.nope`, "undefined"},
		{"lanes runtime error", policies.Lanes, `decision := {c.card.id: x | some c in input.cards; x := 1 / 0}`, "palace.lanes"},
		{"lanes bad lane", policies.Lanes, `decision := {c.card.id: {"salience": 50, "breakdown": {}, "lane": "top", "render_form": "inline_full"} | some c in input.cards}`,
			`field kc_store.lane must be one of [core scoped ref_only inspector_only], got "top"`},
		{"lanes breakdown not numbers", policies.Lanes, `decision := {c.card.id: {"salience": 50, "breakdown": {"x": "1"}, "lane": "core", "render_form": "inline_full"} | some c in input.cards}`,
			`field kc_store.breakdown."x" must be a whole number, got "1"`},
		{"lanes fractional salience", policies.Lanes, `decision := {c.card.id: {"salience": 50.5, "breakdown": {}, "lane": "core", "render_form": "inline_full"} | some c in input.cards}`,
			"field kc_store.salience must be a whole number 0..100, got 50.5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := loadRepo(t, map[string]string{string(tt.point) + ".rego": "package palace." + string(tt.point) + "\n\nimport rego.v1\n\n" + tt.body + "\n"})
			ctx := context.Background()
			var d policies.Decision
			switch tt.point {
			case policies.Scope:
				var out policies.ScopeOutput
				out, d = set.Scope(ctx, policies.ScopeInput{Context: policies.ScopeContext{File: "store/db.go"}, Cards: []policies.ScopeCard{storeCard}})
				if r := out["kc_store"]; !r.Applies || r.ScopeFit != 23 {
					t.Errorf("fallback result %+v is not the default's", r)
				}
			case policies.Lanes:
				var out policies.LanesOutput
				out, d = set.Lanes(ctx, policies.LanesInput{Cards: []policies.LanesCard{{Card: policies.LanesCardInfo{ID: "kc_store"}, ScopeFit: 30, OperationFit: 20}}})
				if r := out["kc_store"]; r.Salience != 50 || r.Lane != "scoped" {
					t.Errorf("fallback result %+v is not the default's", r)
				}
			}
			if !strings.Contains(d.Fallback, tt.want) || !strings.Contains(d.Fallback, string(tt.point)+".rego") {
				t.Errorf("fallback %q does not name the policy and %q", d.Fallback, tt.want)
			}
			if d.Engine != policies.EngineGo || d.Source != policies.SourceEmbedded || d.Error == "" {
				t.Errorf("decision = %+v", d)
			}
		})
	}
}

func TestTeamScopeRunsAsWritten(t *testing.T) {
	set := loadRepo(t, map[string]string{"scope.rego": `package palace.scope

import rego.v1

decision := {c.id: {"applies": true, "scope_fit": 30, "operation_fit": 20, "why": ["team says so"]} | some c in input.cards}
`})
	out, d := set.Scope(context.Background(), policies.ScopeInput{Cards: []policies.ScopeCard{uiCard}})
	if r := out["kc_ui"]; r.ScopeFit != 30 || r.Why[0] != "team says so" {
		t.Errorf("team scope not used: %+v", r)
	}
	if d.Engine != policies.EngineRego || d.Source != policies.SourceRepo || d.Fallback != "" {
		t.Errorf("decision = %+v", d)
	}
	// A team file identical to the default is the default: Go engine.
	def, _ := policies.LoadDefaults(context.Background(), policies.Options{})
	if sv, _ := def.Served(policies.Scope); sv.Engine != policies.EngineGo {
		t.Errorf("default scope engine %q", sv.Engine)
	}
}

func TestMailbox(t *testing.T) {
	ctx := context.Background()
	in := policies.MailboxInput{Box: "project", Path: ".palace/inbox.jsonl", Line: 3, Letter: map[string]any{"agent": "claude", "class": "bug"}}
	def, _ := policies.LoadDefaults(ctx, policies.Options{})
	msgs, d, err := def.Mailbox(ctx, in)
	if err != nil || len(msgs) != 0 || d.Engine != policies.EngineGo {
		t.Fatalf("default mailbox: %v %+v %v", msgs, d, err)
	}
	team := loadRepo(t, map[string]string{"mailbox.rego": `package palace.mailbox

import rego.v1

deny contains sprintf("%s:%d: letter has no repo", [input.path, input.line]) if not input.letter.repo

deny contains "bug letters need a snippet" if {
	input.letter.class == "bug"
	not input.letter.snippet
}
`})
	msgs, d, err = team.Mailbox(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(msgs, "|") != ".palace/inbox.jsonl:3: letter has no repo|bug letters need a snippet" && strings.Join(msgs, "|") != "bug letters need a snippet|.palace/inbox.jsonl:3: letter has no repo" {
		t.Errorf("deny = %q", msgs)
	}
	if d.Engine != policies.EngineRego || d.Source != policies.SourceRepo {
		t.Errorf("decision = %+v", d)
	}
	in.Letter["repo"], in.Letter["snippet"] = "github.com/a/b", "x"
	if msgs, _, err := team.Mailbox(ctx, in); err != nil || len(msgs) != 0 {
		t.Errorf("clean letter: %q %v", msgs, err)
	}
}

func TestMailboxFailsClosed(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"not strings", `deny contains 42 if true`, "palace.mailbox returned a malformed decision: field deny[0] must be a string, got 42"},
		{"not a set", `deny := "no"`, `field deny must be a set of strings, got "no"`},
		{"undefined", `deny := {"x"} if input.nope`, "undefined"},
		{"deadline", `deny contains "x" if count([x | some i in numbers.range(1, 100000000); x := i]) > 0`, "deadline"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := loadRepo(t, map[string]string{"mailbox.rego": "package palace.mailbox\n\nimport rego.v1\n\n" + tt.body + "\n"})
			msgs, d, err := set.Mailbox(context.Background(), policies.MailboxInput{Letter: map[string]any{}})
			if err == nil || msgs != nil {
				t.Fatalf("failed policy passed: %q", msgs)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "mailbox.rego") || d.Error == "" {
				t.Errorf("err = %v", err)
			}
		})
	}
}

func asErrors(err error, es *policies.Errors) bool { return errors.As(err, es) }
