// Command policy is a test guest serving every decision point, whose
// misbehaviour is chosen by the point's own input, so policies can test
// what a failing .wasm policy does to each point: gate by the card's
// statement, scope and lanes by the first card's id, mailbox by the
// letter's "what". "loop" never returns, "panic" panics, "malformed"
// answers with a wrong type, "notjson" answers with bytes that are not
// JSON; anything else gets a well-formed answer.
package main

import (
	"encoding/json"

	"github.com/extism/go-pdk"
)

//go:wasmexport gate
func gate() int32 {
	var in struct {
		Card struct {
			Statement string `json:"statement"`
		} `json:"card"`
	}
	if !read(&in) {
		return 1
	}
	return answer(in.Card.Statement, `{"allow":"true","reasons":[],"missing":{}}`,
		map[string]any{"allow": true, "reasons": []string{"wasm says yes"}, "missing": map[string]int{}})
}

type batch struct {
	Cards []struct {
		ID   string `json:"id"`
		Card struct {
			ID string `json:"id"`
		} `json:"card"`
	} `json:"cards"`
}

// ids are the batch's card ids: scope cards carry their id at the top,
// lanes cards inside "card".
func (b batch) ids() []string {
	var out []string
	for _, c := range b.Cards {
		out = append(out, c.ID+c.Card.ID)
	}
	return out
}

//go:wasmexport scope
func scope() int32 {
	var in batch
	if !read(&in) {
		return 1
	}
	out := map[string]any{}
	for _, id := range in.ids() {
		out[id] = map[string]any{"applies": true, "scope_fit": 10, "operation_fit": 0, "why": []string{"wasm"}}
	}
	return answer(first(in.ids()), `{"x":{"applies":true,"scope_fit":31,"operation_fit":0,"why":["x"]}}`, out)
}

//go:wasmexport lanes
func lanes() int32 {
	var in batch
	if !read(&in) {
		return 1
	}
	out := map[string]any{}
	for _, id := range in.ids() {
		out[id] = map[string]any{"salience": 50, "breakdown": map[string]int{"scope_fit": 50}, "lane": "scoped", "render_form": "inline_compact"}
	}
	return answer(first(in.ids()), `{"x":{"salience":50,"breakdown":{},"lane":"top","render_form":"inline_full"}}`, out)
}

//go:wasmexport mailbox
func mailbox() int32 {
	var in struct {
		Letter map[string]any `json:"letter"`
	}
	if !read(&in) {
		return 1
	}
	what, _ := in.Letter["what"].(string)
	class, _ := in.Letter["class"].(string)
	return answer(what, `[42]`, []string{"wasm: class " + class})
}

func read(v any) bool {
	if err := json.Unmarshal(pdk.Input(), v); err != nil {
		pdk.SetError(err)
		return false
	}
	return true
}

func first(xs []string) string {
	if len(xs) == 0 {
		return ""
	}
	return xs[0]
}

// answer misbehaves as how says, or writes good as JSON.
func answer(how, malformed string, good any) int32 {
	switch how {
	case "loop":
		for {
		}
	case "panic":
		panic("policy guest: boom")
	case "malformed":
		pdk.OutputString(malformed)
	case "notjson":
		pdk.OutputString("no, thanks")
	default:
		b, _ := json.Marshal(good)
		pdk.Output(b)
	}
	return 0
}

func main() {}
