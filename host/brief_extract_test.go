package host

import (
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
			for _, e := range extractEntities([]sourceText{{"ev_1", tt.text}}) {
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
	for _, c := range extractCues(texts) {
		got = append(got, c.Cue+"@"+c.Source)
	}
	want := []string{"todo@ev_1", "remaining@ev_1", "blocker@kc_1"}
	if !slices.Equal(got, want) {
		t.Errorf("cues = %v, want %v (duplicates once, in source order)", got, want)
	}
}
