package pack

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// BenchmarkRank measures the relevance model alone over 2,000 card
// documents of engineering prose and identifiers (the visible set of a
// repository on a 100k-card palace).
func BenchmarkRank(b *testing.B) {
	words := strings.Fields(`the handler should validate every request before it reaches the database layer
		use context cancellation in long running goroutines keep migrations reversible run gofmt before commit
		HTTPServer useEffect zz_generated.deepcopy.go pkg/kubelet/eviction_manager_test.go listeners pinned
		never log secrets tokens or passwords prefer table driven tests snapshot fixtures under testdata
		error wrapping with fmt.Errorf and %w dependency versions are pinned in go.sum bump only with review`)
	rng := rand.New(rand.NewPCG(1, 2))
	text := func(n int) string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = words[rng.IntN(len(words))]
		}
		return strings.Join(ws, " ")
	}
	docs := make([]relevanceDoc, 2000)
	for i := range docs {
		docs[i] = relevanceDoc{id: fmt.Sprint(i), statement: text(14), content: text(40), trigger: text(6), evidence: text(60)}
	}
	q := newRelQuery("why do the eviction manager tests fail when listeners are pinned", "pkg/kubelet/eviction_manager_test.go")
	b.ReportAllocs()
	for b.Loop() {
		if len(q.rank(docs)) == 0 {
			b.Fatal("nothing ranked")
		}
	}
}
