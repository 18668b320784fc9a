package store

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/palacehq/palace/domain"
)

// FuzzDecodeLists holds the fast path of decodeLists to json.Unmarshal's
// answer, error or not, on the seeds (every `go test`) and on whatever
// `go test -fuzz FuzzDecodeLists` generates.
func FuzzDecodeLists(f *testing.F) {
	for _, s := range []string{
		`{"paths":["store/**","a b/*"],"languages":["go"],"fields":[]}`,
		`{"paths":[],"languages":[],"fields":[]}`,
		`{}`, ` { "fields" : [ "x" ] , "paths":[ ] } `, `{"paths":null}`, `{"Paths":["x"]}`,
		`{"paths":["a\"b"]}`, `{"paths":["\u003c"]}`, `{"paths":["ünï"]}`, "{\"paths\":[\"\xff\"]}",
		`{"paths":["a"],"paths":["b"]}`, `{"extra":1,"paths":["a"]}`, `{"paths":["a",]}`, `{"paths":["a"]`,
		`{"paths":["a"]}x`, `[]`, ``, `{"paths":[1]}`, "{\"paths\":[\"a\tb\"]}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var got domain.Scope
		gotErr := decodeLists(raw, scopeKeys, []*[]string{&got.Paths, &got.Languages, &got.Fields}, &got)
		var want domain.Scope
		wantErr := json.Unmarshal([]byte(raw), &want)
		if (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("%q: error %v, json.Unmarshal says %v", raw, gotErr, wantErr)
		}
		if wantErr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: %#v, json.Unmarshal gives %#v", raw, got, want)
		}
	})
}
