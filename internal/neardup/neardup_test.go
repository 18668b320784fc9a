package neardup_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/palacehq/palace/internal/neardup"
)

func TestWords(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{"Budget filler rule number 3: keep handlers small.", []string{"3", "budget", "filler", "handlers", "keep", "number", "rule", "small"}},
		{"Use `busy_timeout` with WAL, use it!", []string{"busy", "it", "timeout", "use", "wal", "with"}},
		{"使用WAL模式避免数据库锁", []string{"使用", "免数", "库锁", "式避", "据库", "数据", "模式", "wal", "避免"}},
		{"锁", []string{"锁"}},
		{"Cafe\u0301 keys", []string{"caf\u00e9", "keys"}},
	} {
		got := neardup.Words(tt.in)
		want := slices.Clone(tt.want)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("Words(%q) = %q, want %q", tt.in, got, want)
		}
	}
}

func TestSimilarity(t *testing.T) {
	a := neardup.Words("Budget filler rule number 3: keep handlers small")
	b := neardup.Words("Budget filler rule number 4: keep handlers small")
	if got := neardup.Similarity(a, b); got != 7.0/9 {
		t.Errorf("one word apart: %v, want 7/9", got)
	}
	c := neardup.Words("Run make verify before every push")
	if got := neardup.Similarity(a, c); got != 0 {
		t.Errorf("unrelated: %v", got)
	}
	if got := neardup.Similarity(nil, nil); got != 0 {
		t.Errorf("empty: %v", got)
	}
}

// The index finds exactly what comparing every pair finds.
func TestIndexMatchesEveryPair(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	vocab := strings.Fields("keep handlers small run tests before push wal busy timeout store errors wrap log context cancel retry lock file path")
	var stmts []string
	for range 300 {
		n := 3 + r.IntN(8)
		var ws []string
		for range n {
			ws = append(ws, vocab[r.IntN(len(vocab))])
		}
		stmts = append(stmts, strings.Join(ws, " "))
	}
	x := neardup.NewIndex(stmts)
	for i, s := range stmts {
		var want []int
		for j, o := range stmts {
			if j != i && (neardup.Similarity(neardup.Words(s), neardup.Words(o)) >= neardup.Threshold || strings.EqualFold(s, o)) {
				want = append(want, j)
			}
		}
		var got []int
		for _, m := range x.Near(s, i) {
			got = append(got, m.Entry)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("Near(%q) = %v, want %v", s, got, want)
		}
	}
}

func ExampleIndex_Near() {
	x := neardup.NewIndex([]string{
		"Budget filler rule number 3: keep handlers small",
		"Run make verify before every push",
		"budget filler rule number 3: keep handlers small.",
	})
	for _, m := range x.Near("Budget filler rule number 4: keep handlers small", -1) {
		fmt.Printf("%d exact=%v %.2f\n", m.Entry, m.Exact, m.Similarity)
	}
	// Output:
	// 0 exact=false 0.78
	// 2 exact=false 0.78
}
