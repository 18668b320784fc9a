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

// FuzzAppendLists holds the scope, trigger and tag encoding to
// json.Marshal's bytes, on the seeds and on generated strings.
func FuzzAppendLists(f *testing.F) {
	for _, s := range []string{"store/**", "", "a\"b", "a\\b", "<x>&y", "ünï", "\xff", "a\tb", "\x7f", "\u2028", "go"} {
		f.Add(s, "go")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		for _, s := range []domain.Scope{{Paths: []string{a, b}, Languages: []string{b}}, {Fields: []string{a}}, {}} {
			want, err := json.Marshal(normScope(s))
			if err != nil {
				t.Fatal(err)
			}
			if got := appendLists(nil, scopeKeys, s.Paths, s.Languages, s.Fields); string(got) != string(want) {
				t.Fatalf("scope %q: %s, json.Marshal gives %s", s, got, want)
			}
			tr := domain.Trigger{Patterns: s.Paths, Intents: s.Fields, ToolNeeds: s.Languages}
			want, _ = json.Marshal(normTrigger(tr))
			if got := appendLists(nil, triggerKeys, tr.Patterns, tr.Intents, tr.ToolNeeds); string(got) != string(want) {
				t.Fatalf("trigger %q: %s, json.Marshal gives %s", tr, got, want)
			}
			want, _ = json.Marshal(nonNil(s.Paths))
			if got := appendList(nil, s.Paths); string(got) != string(want) {
				t.Fatalf("tags %q: %s, json.Marshal gives %s", s.Paths, got, want)
			}
		}
	})
}
