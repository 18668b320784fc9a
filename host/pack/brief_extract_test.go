package pack

import (
	"reflect"
	"slices"
	"testing"
)

func TestExtractEntities(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string // kind:text
		not  []string
	}{
		{"command with a path argument is one command, not a path",
			"go test ./store/... failed with 'database is locked'", []string{"command:go test ./store/..."}, []string{"path:./store"}},
		{"backticked command", "run `make bench` before merging", []string{"command:make bench"}, nil},
		{"ratio is not a path", "the tests passed 50/50 runs", nil, []string{"path:50/50"}},
		{"paths and files", "see store/store.go and palace.db", []string{"path:store/store.go", "path:palace.db"}, nil},
		{"url kept whole, not a path", "docs at https://sqlite.org/wal.html.", []string{"url:https://sqlite.org/wal.html"}, []string{"path:sqlite.org/wal.html"}},
		{"identifiers", "SQLITE_BUSY hits when busy_timeout is 0; call store.Open() from OpenStore",
			[]string{"identifier:SQLITE_BUSY", "identifier:busy_timeout", "identifier:store.Open()", "identifier:OpenStore"}, nil},
		{"English words are not commands", "name the go test that covers it", nil, []string{"command:go test"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, e := range entities([]sourceText{{"ev_1", tt.text}}, true) {
				got = append(got, e.Kind+":"+e.Text)
			}
			for _, w := range tt.want {
				if !slices.Contains(got, w) {
					t.Errorf("missing %s in %v", w, got)
				}
			}
			for _, n := range tt.not {
				if slices.Contains(got, n) {
					t.Errorf("unexpected %s in %v", n, got)
				}
			}
		})
	}
}

func TestExtractCues(t *testing.T) {
	texts := []sourceText{
		{"ev_1", "fixed the import\nTODO: measure the checkpoint cost\nremaining: docs"},
		{"ev_2", "TODO: measure the checkpoint cost"},
		{"kc_1", "the blocker is the migration lock"},
	}
	var got []string
	for _, c := range cues(texts, true) {
		got = append(got, c.Cue+"@"+c.Source)
	}
	want := []string{"todo@ev_1", "remaining@ev_1", "blocker@kc_1"}
	if !slices.Equal(got, want) {
		t.Errorf("cues = %v, want %v (duplicates once, in source order)", got, want)
	}
}

// FuzzExtractPrefilters holds the extractors with their prefilters to the
// plain regexp scans: a prefilter may only skip texts with no match.
func FuzzExtractPrefilters(f *testing.F) {
	for _, s := range []string{
		"go test ./store/... failed with 'database is locked'", "run `make bench` before merging",
		"docs at https://sqlite.org/wal.html.", "SQLITE_BUSY hits when busy_timeout is 0; call store.Open() from OpenStore",
		"see store/store.go and palace.db", "python3 -m venv .venv", "$ palace context --file x.go", "TODO: later\nſtill fails",
		"bloc\u212Aed on review", "Follow-up: the pending open question", "plain english text, nothing here.", "a.tsx b.jsonl c.cpp",
		"it DOESN'T WORK after the revert", "Flaky on CI; failed twice", "contradicts ev_1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		in := []sourceText{{"ev_1", s}}
		if got, want := entities(in, true), entities(in, false); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: entities %v, without prefilters %v", s, got, want)
		}
		if got, want := cues(in, true), cues(in, false); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: cues %v, without prefilters %v", s, got, want)
		}
		if got, want := hasConflictCue(s), conflictCue.MatchString(s); got != want {
			t.Fatalf("%q: conflict cue %v, the regexp says %v", s, got, want)
		}
	})
}
