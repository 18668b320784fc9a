package pack

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/palacehq/palace/domain"
)

// FuzzSortByFill: the in-place permutation gives the order a plain stable
// sort by the fill key gives, on cards and on slim texts alike.
func FuzzSortByFill(f *testing.F) {
	f.Add(uint64(1), 0)
	f.Add(uint64(7), 1)
	f.Add(uint64(42), 300)
	f.Fuzz(func(t *testing.T, seed uint64, n int) {
		if n < 0 || n > 2000 {
			return
		}
		r := rand.New(rand.NewPCG(seed, seed))
		chain := []string{"an_w", "an_r", "an_g"}
		anchors := append(slices.Clone(chain), "an_other", "")
		pers := []domain.Persistence{domain.PersistenceFoundational, domain.PersistenceProtected, domain.PersistenceStandard, ""}
		tiers := append(slices.Clone(domain.Tiers), "")
		cards := make([]domain.Card, n)
		for i := range cards {
			cards[i] = domain.Card{
				ID:          fmt.Sprintf("kc_%d", r.IntN(n+1)), // ids may repeat
				Persistence: pers[r.IntN(len(pers))], Tier: tiers[r.IntN(len(tiers))], AnchorID: anchors[r.IntN(len(anchors))],
				Statement: fmt.Sprint(i), // tells equal keys apart
			}
		}
		rank := func(c domain.Card) []int {
			a := slices.Index(chain, c.AnchorID)
			if a < 0 {
				a = len(chain)
			}
			return []int{persistenceRank[c.Persistence], c.Tier.Rank(), a}
		}
		want := slices.Clone(cards)
		slices.SortStableFunc(want, func(x, y domain.Card) int {
			if c := slices.Compare(rank(x), rank(y)); c != 0 {
				return c
			}
			return strings.Compare(x.ID, y.ID)
		})
		got := slices.Clone(cards)
		sortByFill(chain, got, func(c *domain.Card) (domain.Persistence, domain.Tier, string, string) {
			return c.Persistence, c.Tier, c.AnchorID, c.ID
		})
		// Equal keys may come in any order: compare keys, and that every
		// card is still there once.
		key := func(c domain.Card) string { return fmt.Sprint(rank(c), c.ID) }
		for i := range want {
			if key(got[i]) != key(want[i]) {
				t.Fatalf("position %d: %v, want %v", i, key(got[i]), key(want[i]))
			}
		}
		stmts := func(cs []domain.Card) []string {
			out := make([]string, len(cs))
			for i, c := range cs {
				out[i] = c.Statement
			}
			slices.Sort(out)
			return out
		}
		if !slices.Equal(stmts(got), stmts(cards)) {
			t.Fatalf("the sort lost or duplicated cards")
		}
	})
}

func TestMergeCandidates(t *testing.T) {
	fill := make([]int, 300)
	for i := range fill {
		fill[i] = i
	}
	matched := []int{299, 10, 120, 298}
	got := mergeCandidates(fill, matched)
	if len(got) != CandidateLimit {
		t.Fatalf("picked %d, want %d", len(got), CandidateLimit)
	}
	head := CandidateLimit / 4
	for i := range head {
		if got[i] != i {
			t.Fatalf("position %d is %d: the head of the fill comes first", i, got[i])
		}
	}
	if want := []int{299, 120, 298}; !slices.Equal(got[head:head+3], want) {
		t.Errorf("after the head: %v, want the matches not already picked %v", got[head:head+3], want)
	}
	seen := map[int]bool{}
	for _, k := range got {
		if seen[k] {
			t.Fatalf("%d picked twice", k)
		}
		seen[k] = true
	}
	if got[len(got)-1] != CandidateLimit-3 {
		t.Errorf("the fill's rest ends at %d, want %d (120 came earlier)", got[len(got)-1], CandidateLimit-3)
	}
}
