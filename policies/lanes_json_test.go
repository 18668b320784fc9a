package policies

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/valyala/fastjson"
)

// decodeLanesJSON must accept only answers decodeLanes accepts, and decode
// them to the same results: real answers (the Go engine's, as a module
// would write them) and the same answers broken in each way a module can.
func TestDecodeLanesJSONMatchesDecodeLanes(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	breaks := []func(s string) string{
		func(s string) string { return s },
		func(s string) string { return strings.Replace(s, `"salience":`, `"salience":"`, 1) + `"` },
		func(s string) string { return strings.Replace(s, `"lane":"`, `"lane":"x`, 1) },
		func(s string) string { return strings.Replace(s, `"render_form":"`, `"render_form":"x`, 1) },
		func(s string) string { return strings.Replace(s, `"breakdown":{`, `"breakdown":{"extra":1.5,`, 1) },
		func(s string) string { return strings.Replace(s, `"breakdown":{`, `"breakdown":{"applied":1,`, 1) }, // duplicate key
		func(s string) string { return strings.Replace(s, `"salience":`, `"salience":1,"salience":`, 1) },
		func(s string) string { return strings.Replace(s, `,"lane":`, `,"lain":`, 1) },
		func(s string) string { return strings.Replace(s, `"salience":`, `"salience":1e1,"x":`, 1) },
		func(s string) string { return strings.Replace(s, `"salience":`, `"salience":101,"x":`, 1) },
		func(s string) string { return strings.Replace(s, `"salience":`, `"salience":7.0,"x":`, 1) },
		func(s string) string { return strings.Replace(s, `{"salience"`, `{"note":[1,{}],"salience"`, 1) },
		func(s string) string { return "[" + s + "]" },
		func(s string) string { return strings.Replace(s, `:{"salience"`, `:7,"y":{"salience"`, 1) },
	}
	var fast, slow int
	for trial := range 300 {
		in := LanesInput{Config: LanesConfig{}.withDefaults()}
		for i := range 1 + r.IntN(20) {
			in.Cards = append(in.Cards, LanesCard{
				Card:     LanesCardInfo{ID: fmt.Sprintf("kc_%d", i), Persistence: []string{"standard", "protected", "foundational"}[r.IntN(3)]},
				ScopeFit: r.IntN(31), OperationFit: r.IntN(21), AgeDays: r.IntN(200),
				Counts30d: Counts30d{Applied: r.IntN(9), Skipped: r.IntN(9), Trimmed: r.IntN(9), Viewed: r.IntN(9)},
			})
		}
		answer, err := json.Marshal(defaultLanes(in))
		if err != nil {
			t.Fatal(err)
		}
		broken := breaks[trial%len(breaks)](string(answer))
		v, err := fastjson.Parse(broken)
		if err != nil {
			continue // not JSON: both paths see the parse error first
		}
		want, wantErr := decodeLanes(astOf(v), in.Cards)
		got, ok := decodeLanesJSON(v, in.Cards)
		if !ok {
			slow++
			continue
		}
		fast++
		if wantErr != nil {
			t.Fatalf("trial %d: decodeLanesJSON accepted what decodeLanes rejects (%v):\n%s", trial, wantErr, broken)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("trial %d: decoded differently:\n got %+v\nwant %+v", trial, got, want)
		}
	}
	if fast < 20 || slow < 100 {
		t.Errorf("%d answers decoded directly, %d through OPA values: the test no longer exercises both", fast, slow)
	}
}
