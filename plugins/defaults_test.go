package plugins_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// The example plugins in examples/plugins must answer exactly what palace's
// embedded Rego defaults answer (policies/README.md). These tables
// pin that contract on the real wasm.

func TestGateGo(t *testing.T) {
	human := `"reviewer":{"name":"alice","type":"human"}`
	agent := `"reviewer":{"name":"claude","type":"agent"}`
	promote := func(tier, target, counts, reviewer string) string {
		return `{"action":"promote","target":"` + target + `","card":{"id":"kc_1","tier":"` + tier +
			`","status":"candidate","anchor":"repo"},"counts":` + counts + `,` + reviewer + `,"mode":"human"}`
	}
	publish := func(target, counts, reviewer string) string {
		return `{"action":"publish","target":"` + target + `","card":{"id":"kc_1","tier":"shu","status":"promoted"},"counts":` +
			counts + `,` + reviewer + `,"mode":"human"}`
	}
	tests := []struct {
		name, input, want string
	}{
		{"dao_tian canonical, all met", promote("dao_tian", "canonical", `{"supporting":3,"verification":2,"teaching":1,"counterexample":0}`, human),
			`{"allow":true,"reasons":["dao_tian → canonical: all thresholds met"],"missing":{}}`},
		{"dao_tian canonical, short and agent", promote("dao_tian", "canonical", `{"supporting":1}`, agent),
			`{"allow":false,"reasons":["reviewer: dao_tian → canonical needs a human reviewer","supporting: have 1, need 3","teaching: have 0, need 1","verification: have 0, need 2"],"missing":{"supporting":2,"teaching":1,"verification":2}}`},
		{"dao_ren promoted by an agent", promote("dao_ren", "promoted", `{"supporting":2,"verification":1}`, agent),
			`{"allow":true,"reasons":["dao_ren → promoted: all thresholds met"],"missing":{}}`},
		{"dao_ren promoted, one short", promote("dao_ren", "promoted", `{"supporting":1,"verification":1,"teaching":5}`, human),
			`{"allow":false,"reasons":["supporting: have 1, need 2"],"missing":{"supporting":1}}`},
		{"shu promoted, counterexample", promote("shu", "promoted", `{"supporting":4,"verification":4,"counterexample":1}`, human),
			`{"allow":false,"reasons":["counterexample: 1 on record, any counterexample blocks promotion"],"missing":{}}`},
		{"qi promoted, no counts", promote("qi", "promoted", `{}`, human),
			`{"allow":false,"reasons":["supporting: have 0, need 1","verification: have 0, need 1"],"missing":{"supporting":1,"verification":1}}`},
		{"dao_ren canonical, human", promote("dao_ren", "canonical", `{"supporting":3,"verification":2}`, human),
			`{"allow":true,"reasons":["dao_ren → canonical: all thresholds met"],"missing":{}}`},
		{"shu canonical, one short", promote("shu", "canonical", `{"supporting":2,"verification":1}`, human),
			`{"allow":false,"reasons":["verification: have 1, need 2"],"missing":{"verification":1}}`},
		{"qi canonical, agent", promote("qi", "canonical", `{"supporting":2,"verification":2}`, agent),
			`{"allow":false,"reasons":["reviewer: qi → canonical needs a human reviewer"],"missing":{}}`},
		{"no rule", promote("dao_tian", "promoted", `{"supporting":0,"counterexample":2}`, agent),
			`{"allow":false,"reasons":["no gate rule for dao_tian → promoted"],"missing":{}}`},
		{"publish repo by an agent", publish("repo", `{"supporting":1}`, agent),
			`{"allow":true,"reasons":["publish → repo: allowed"],"missing":{}}`},
		{"publish global by an agent", publish("global", `{}`, agent),
			`{"allow":false,"reasons":["reviewer: publish → global needs a human reviewer"],"missing":{}}`},
		{"publish global, counterexample", publish("global", `{"counterexample":2}`, human),
			`{"allow":false,"reasons":["counterexample: 2 on record, any counterexample blocks publishing"],"missing":{}}`},
		{"publish to canonical", publish("canonical", `{"counterexample":1}`, human),
			`{"allow":false,"reasons":["no gate rule for publish → canonical"],"missing":{}}`},
		{"unknown action", `{"action":"delete","target":"promoted","card":{"tier":"qi"}}`,
			`{"allow":false,"reasons":["unknown action delete"],"missing":{}}`},
	}
	rt := newRuntime(t, testConfig())
	m := load(t, rt, "gate")
	if got := m.Points(); !reflect.DeepEqual(got, []string{"gate"}) {
		t.Fatalf("Points() = %q, want [gate]", got)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := m.Call(context.Background(), "gate", []byte(tt.input))
			if err != nil {
				t.Fatal(err)
			}
			assertSameJSON(t, out, tt.want)
		})
	}
	for in, want := range map[string]string{
		`{"counts":"many"}`:                      "call plugin gate.wasm gate: gate input: counts: want an object, found a string",
		`{"counts":{"teaching":true}}`:           "gate input: counts.teaching: want a number, found a boolean",
		`{"card":{"tier":7}}`:                    "gate input: card.tier: want a string, found a number",
		`{"action":"promote",}`:                  "gate input: invalid JSON at offset 20: want a member name, found '}'",
		`{"action":"promote"} {}`:                "gate input: invalid JSON at offset 21: want the end of the input",
		`null`:                                   "gate input: input: want an object, found null",
		`{"x":` + strings.Repeat("[", 600) + `}`: "gate input: values nested deeper than 512",
	} {
		_, err := m.Call(context.Background(), "gate", []byte(in))
		mustContain(t, err, want)
	}
}

func TestLanesGo(t *testing.T) {
	card := func(id, persistence, pref string, scope, op int, relevance, counts string, age int) string {
		return `{"card":{"id":"` + id + `","tier":"shu","status":"promoted","persistence":"` + persistence +
			`","render_pref":"` + pref + `","statement":"s"},"scope_fit":` + itoa(scope) + `,"operation_fit":` + itoa(op) +
			`,"relevance":` + relevance + `,"counts30d":` + counts + `,"age_days":` + itoa(age) + `}`
	}
	none := `{"applied":0,"skipped":0,"trimmed":0,"viewed":0}`
	// result renders one expected entry; bd is scope_fit, operation_fit,
	// relevance, persistence, viewed, skipped, trimmed, inactivity, then
	// adopted and rejected (written only when not 0).
	result := func(salience int, lane, form string, bd [10]int) string {
		keys := []string{"scope_fit", "operation_fit", "relevance", "persistence", "viewed", "skipped", "trimmed", "inactivity", "adopted", "rejected"}
		var parts []string
		for i, k := range keys {
			if i < 8 || bd[i] != 0 {
				parts = append(parts, `"`+k+`":`+itoa(bd[i]))
			}
		}
		return `{"salience":` + itoa(salience) + `,"breakdown":{` + strings.Join(parts, ",") + `},"lane":"` + lane + `","render_form":"` + form + `"}`
	}
	// Relevance points are relevance × 60 rounded: 0.5 → 30, 0.3 → 18,
	// 0.2 → 12, 0.1 → 6.
	tests := []struct {
		name, cards, config string
		want                map[string]string
	}{
		{"lanes and render forms", strings.Join([]string{
			card("found", "foundational", "auto", 10, 0, "0.3", none, 0),
			card("foundfar", "foundational", "auto", 10, 10, "0.2", none, 0),
			card("found39", "foundational", "auto", 1, 0, "0.3", none, 0),
			card("prot", "protected", "ref_preferred", 12, 0, "0.3", none, 0),
			card("busy", "standard", "auto", 30, 20, "0.5", `{"applied":3,"viewed":7}`, 10),
			card("busyfull", "standard", "inline_full", 30, 20, "0.5", `{"applied":3,"viewed":7}`, 10),
			card("s45", "standard", "inline_full", 15, 0, "0.5", none, 0),
			card("s44", "standard", "auto", 14, 0, "0.5", none, 0),
			card("lowrel", "standard", "auto", 30, 6, "0.1", none, 0),
			card("s35", "standard", "auto", 5, 0, "0.5", none, 0),
			card("used", "standard", "auto", 10, 0, "0.2", `{"used":1,"miss":1}`, 0),
			card("rejected", "standard", "auto", 30, 20, "0.5", `{"rejected":1}`, 0),
		}, ","), `{}`, map[string]string{
			"found":    result(48, "core", "inline_compact", [10]int{10, 0, 18, 20}),
			"foundfar": result(32, "ref_only", "ref_only", [10]int{10, 10, 12, 0}),
			"found39":  result(39, "ref_only", "ref_only", [10]int{1, 0, 18, 20}),
			"prot":     result(40, "scoped", "ref_only", [10]int{12, 0, 18, 10}),
			"busy":     result(85, "core", "inline_compact", [10]int{30, 20, 30, 0, 5}),
			"busyfull": result(85, "core", "inline_full", [10]int{30, 20, 30, 0, 5}),
			"s45":      result(45, "scoped", "inline_full", [10]int{15, 0, 30}),
			"s44":      result(44, "ref_only", "ref_only", [10]int{14, 0, 30}),
			"lowrel":   result(42, "inspector_only", "inspector_only", [10]int{30, 6, 6}),
			"s35":      result(35, "inspector_only", "inspector_only", [10]int{5, 0, 30}),
			"used":     result(46, "scoped", "inline_compact", [10]int{10, 0, 12, 8: 24}),
			"rejected": result(50, "scoped", "inline_compact", [10]int{30, 20, 30, 9: -30}),
		}},
		{"penalties, inactivity and clamping", strings.Join([]string{
			card("cold", "standard", "auto", 0, 0, "0.2", `{"skipped":10,"trimmed":10}`, 400),
			card("ontopic", "standard", "auto", 30, 0, "0.5", `{"skipped":10,"trimmed":10}`, 400),
			card("offset", "standard", "auto", 23, 0, "0.3", `{"applied":2,"skipped":8,"trimmed":6}`, 43),
			card("over", "foundational", "auto", 90, 20, "0.5", none, 0),
		}, ","), `{}`, map[string]string{
			"cold":    result(0, "inspector_only", "inspector_only", [10]int{0, 0, 12, 0, 0, -10, -10, -10}),
			"ontopic": result(50, "scoped", "inline_compact", [10]int{30, 0, 30, 0, 0, 0, 0, -10}),
			"offset":  result(36, "ref_only", "ref_only", [10]int{23, 0, 18, 0, 0, -2, -2, -1}),
			"over":    result(100, "core", "inline_compact", [10]int{90, 20, 30, 20}),
		}},
		{"config overrides", card("old", "standard", "auto", 30, 20, "0.1", `{"skipped":1}`, 100),
			`{"inactivity_grace_days":10,"inactivity_step_days":1,"inactivity_max":3,"skip_cooling_threshold_30d":1}`, map[string]string{
				"old": result(51, "scoped", "inline_compact", [10]int{30, 20, 6, 0, 0, -2, 0, -3}),
			}},
		{"partial config", card("old", "standard", "auto", 30, 20, "0.2", none, 200),
			`{"inactivity_max":20}`, map[string]string{
				"old": result(42, "ref_only", "ref_only", [10]int{30, 20, 12, 0, 0, 0, 0, -20}),
			}},
		{"zero config values take the defaults", card("old", "standard", "auto", 30, 20, "0.2", none, 200),
			`{"inactivity_grace_days":0,"inactivity_step_days":0,"inactivity_max":0}`, map[string]string{
				"old": result(52, "scoped", "inline_compact", [10]int{30, 20, 12, 0, 0, 0, 0, -10}),
			}},
		{"empty batch", "", `{}`, map[string]string{}},
	}
	rt := newRuntime(t, testConfig())
	m := load(t, rt, "lanes")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := `{"cards":[` + tt.cards + `],"config":` + tt.config + `}`
			out, err := m.Call(context.Background(), "lanes", []byte(in))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(out), ":-0") {
				t.Errorf("output has a negative zero: %s", out)
			}
			var parts []string
			for id, r := range tt.want {
				parts = append(parts, `"`+id+`":`+r)
			}
			assertSameJSON(t, out, "{"+strings.Join(parts, ",")+"}")
		})
	}
	for in, want := range map[string]string{
		`{"cards":{}}`: "call plugin lanes.wasm lanes: lanes input: cards: want an array, found an object",
		`{"cards":[{"card":{"id":"a"}},{"counts30d":{"applied":"3"}}]}`: "lanes input: cards[1].counts30d.applied: want a number, found a string",
		`{"cards":[{"card":{"id":1}}]}`:                                 "lanes input: cards[0].card.id: want a string, found a number",
		`{"cards":[{"age_days":1.5e}]}`:                                 "lanes input: cards[0]: invalid JSON at offset 26: want a digit in the exponent, found '}'",
		`{"cards":[{"card":{"id":"a\x"}}]}`:                             "lanes input: cards[0].card: invalid JSON at offset 26: want a valid escape",
		`{"cards":[],"config":{"inactivity_max":[]}}`:                   "lanes input: config.inactivity_max: want a number, found an array",
		`{"cards":[],"wake":"yes"}`:                                     "lanes input: wake: want true or false, found a string",
	} {
		_, err := m.Call(context.Background(), "lanes", []byte(in))
		mustContain(t, err, want)
	}
	// Escaped ids come back as the same string; other fields, whatever
	// their shape, are skipped.
	in := `{"cards":[{"card":{"id":"k\u00e9\ud83d\ude00\"q\\\/","anchor":{"a":[1,2,{"b":null}]},"statement":"\n"},` +
		`"scope_fit":30,"operation_fit":20,"relevance":0.25,"extra":[true,false,null,-0.5e-3]}],"config":{}}`
	out, err := m.Call(context.Background(), "lanes", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("output is not JSON: %v: %s", err, out)
	}
	if _, ok := got["ké😀\"q\\/"]; !ok || len(got) != 1 {
		t.Errorf("output keys: %s", out)
	}
}

// lanes-go reads the cards of a batch that are laid out like the card
// before them by comparing bytes (examples/plugins/lanes-go/layout.go);
// whatever the layouts, a batch must get the answers its cards get one by
// one, which always take the general path.
func TestLanesGoLayouts(t *testing.T) {
	palace := func(id, pers string, scope, age string) string {
		return `{"card":{"id":"` + id + `","tier":"shu","status":"promoted","persistence":"` + pers +
			`","render_pref":"auto","anchor":"repo","field":"testing"},"scope_fit":` + scope +
			`,"operation_fit":20,"relevance":0.13439093699171523,"counts30d":{"applied":3,"skipped":1,"trimmed":0,"viewed":7},"age_days":` + age + `}`
	}
	cards := []string{
		palace("a", "standard", "30", "10"),
		palace("b", "foundational", "12", "100"),
		palace("c", "protected", "-0", "0"),
		strings.ReplaceAll(palace("d", "standard", "25", "44"), `,"`, `, "`), // spaces
		`{"age_days":50,"counts30d":{"viewed":9,"applied":1},"card":{"render_pref":"inline_full","persistence":"protected","id":"e"},"scope_fit":30,"operation_fit":20}`,
		palace(`f\u00e9`, "standard", "30", "10"),            // an escaped id
		palace("g", "standard", "1.5e1", "10"),               // an exponent
		palace("h", "standard", "17.25", "9007199254740993"), // strconv's numbers
		strings.Replace(palace("i", "standard", "30", "10"), `"persistence":"standard"`, `"persistence":null`, 1),
		strings.Replace(palace("j", "standard", "30", "10"), `"age_days"`, `"extra":[1,{"x":2}],"age_days"`, 1),
		palace("k", "foundational", "30", "10"),
		palace("l", "standard", "0", "400"),
	}
	rt := newRuntime(t, testConfig())
	m := load(t, rt, "lanes")
	call := func(cards ...string) map[string]json.RawMessage {
		t.Helper()
		out, err := m.Call(context.Background(), "lanes", []byte(`{"cards":[`+strings.Join(cards, ",")+`],"config":{}}`))
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]json.RawMessage
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("output is not JSON: %v: %s", err, out)
		}
		return got
	}
	want := map[string]json.RawMessage{}
	for _, c := range cards {
		for id, r := range call(c) {
			want[id] = r
		}
	}
	if len(want) != len(cards) {
		t.Fatalf("%d answers for %d cards: %v", len(want), len(cards), want)
	}
	for range 2 { // the second batch starts with the first's layout
		got := call(cards...)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("batch answers differ from single-card answers:\n got %v\nwant %v", got, want)
		}
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// assertSameJSON compares got and want as decoded JSON values.
func assertSameJSON(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("output is not JSON: %v: %s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad want: %v", err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("output\n got %s\nwant %s", got, want)
	}
}
