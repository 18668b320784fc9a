package policies_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/palacehq/palace/policies"
)

// fill sets every field of v, recursively, to a value that is not zero and
// differs from its neighbours, so an encoder that drops, renames or swaps
// a field shows up against encoding/json.
func fill(v reflect.Value, seed *int) {
	*seed++
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d \"q\" \\ é\x01", *seed))
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(int64(*seed))
	case reflect.Float64, reflect.Float32:
		v.SetFloat(float64(*seed) + 0.25)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), seed)
			}
		}
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			fill(s.Index(i), seed)
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, seed)
		fill(e, seed)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Interface:
		v.Set(reflect.ValueOf(fmt.Sprintf("any%d", *seed)))
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), seed)
		v.Set(p)
	}
}

// TestWasmInputMatchesEncodingJSON holds the generated encoders of a
// point's input — the JSON a .wasm module reads and the OPA value a Rego
// policy reads — to encoding/json of the same value: same keys, same
// values, for every decision point.
func TestWasmInputMatchesEncodingJSON(t *testing.T) {
	for _, tc := range []struct {
		point policies.Point
		in    any
	}{
		{policies.Gate, &policies.GateInput{}},
		{policies.Scope, &policies.ScopeInput{}},
		{policies.Lanes, &policies.LanesInput{}},
		{policies.Mailbox, &policies.MailboxInput{}},
		{policies.Research, &policies.ResearchInput{}},
	} {
		t.Run(string(tc.point), func(t *testing.T) {
			seed := 0
			fill(reflect.ValueOf(tc.in).Elem(), &seed)
			in := reflect.ValueOf(tc.in).Elem().Interface()
			got, err := policies.WasmInput(tc.point, in)
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(in)
			if err != nil {
				t.Fatal(err)
			}
			var g, w any
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatalf("encoder wrote invalid JSON: %v\n%s", err, got)
			}
			if err := json.Unmarshal(want, &w); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("wasm input differs from encoding/json:\n got %s\nwant %s", got, want)
			}
			// The OPA value a Rego policy reads is the same document.
			rj, err := policies.RegoInputJSON(in)
			if err != nil {
				t.Fatal(err)
			}
			var r any
			if err := json.Unmarshal(rj, &r); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(r, w) {
				t.Errorf("Rego input differs from encoding/json:\n got %s\nwant %s", rj, want)
			}
			// The zero value reaches a module with lists as [], never null.
			zero, err := policies.WasmInput(tc.point, reflect.Zero(reflect.TypeOf(in)).Interface())
			if err != nil {
				t.Fatal(err)
			}
			if tc.point != policies.Research && strings.Contains(string(zero), "null") {
				t.Errorf("zero input holds null: %s", zero)
			}
		})
	}
}
