// Package neardup decides when two card statements say nearly the same
// thing, the one measure every surface uses: their normalized forms are
// equal, or they share at least Threshold of their words (Jaccard). Words
// are runs of letters and digits of the normalized statement, and for Han,
// kana and Hangul the pairs of neighbouring characters. It owns that measure
// and an index over many statements; it must not read the store.
package neardup

import (
	"cmp"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/palacehq/palace/domain"
)

// Threshold is the share of common words from which two statements are
// near-duplicates: "Budget filler rule number 3: keep handlers small" and
// the same rule numbered 4 share 7 of 9 words (0.78); two rules of one
// project that merely share its vocabulary rarely reach it.
const Threshold = float64(thresholdNum) / thresholdDen

// Threshold as a fraction, for exact integer bounds.
const thresholdNum, thresholdDen = 3, 5

// Words are the distinct words of statement as near-duplicates compare
// them, sorted. The slice is shared with later calls for the same
// statement: do not modify it.
func Words(statement string) []string {
	words.RLock()
	ws, ok := words.m[statement]
	words.RUnlock()
	if ok {
		return ws
	}
	ws = readWords(statement)
	words.Lock()
	if len(words.m) >= maxWords {
		words.m = map[string][]string{}
	}
	words.m[statement] = ws
	words.Unlock()
	return ws
}

// words keeps the words of the statements read, for the process, emptied
// at maxWords statements.
var words = struct {
	sync.RWMutex
	m map[string][]string
}{m: map[string][]string{}}

const maxWords = 1 << 15

func readWords(statement string) []string {
	norm := domain.NormalizeStatement(statement)
	var out []string
	word := func(s string) {
		if s != "" {
			out = append(out, s)
		}
	}
	start := -1
	for i := 0; i < len(norm); {
		r, w := utf8.DecodeRuneInString(norm[i:])
		switch {
		case isCJK(r):
			if start >= 0 {
				word(norm[start:i])
				start = -1
			}
			// A run of CJK: every pair of neighbouring runes, or the rune
			// alone when the run is one long.
			j := i + w
			n, nw := utf8.DecodeRuneInString(norm[j:])
			if j >= len(norm) || !isCJK(n) {
				word(norm[i:j])
			}
			for j < len(norm) && isCJK(n) {
				word(norm[i : j+nw])
				i, w = j, nw
				j += nw
				n, nw = utf8.DecodeRuneInString(norm[j:])
			}
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if start < 0 {
				start = i
			}
		default:
			if start >= 0 {
				word(norm[start:i])
				start = -1
			}
		}
		i += w
	}
	if start >= 0 {
		word(norm[start:])
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func isCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// Similarity is the share of words two sorted word sets (Words) have in
// common: |a ∩ b| / |a ∪ b|, 0 when both are empty.
func Similarity(a, b []string) float64 {
	common := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch c := strings.Compare(a[i], b[j]); {
		case c == 0:
			common++
			i++
			j++
		case c < 0:
			i++
		default:
			j++
		}
	}
	union := len(a) + len(b) - common
	if union == 0 {
		return 0
	}
	return float64(common) / float64(union)
}

// Index holds the word sets of many statements and finds the
// near-duplicates of one among them. Build it with Add; it is not safe
// for concurrent Adds.
type Index struct {
	words [][]string
	norms []string
	post  map[string][]int
}

// NewIndex indexes statements; entry i is statements[i].
func NewIndex(statements []string) *Index {
	x := &Index{post: map[string][]int{}}
	for _, s := range statements {
		x.Add(s)
	}
	return x
}

// Add indexes one more statement and returns its entry number.
func (x *Index) Add(statement string) int {
	i := len(x.words)
	ws := Words(statement)
	x.words = append(x.words, ws)
	x.norms = append(x.norms, domain.NormalizeStatement(statement))
	for _, w := range ws {
		x.post[w] = append(x.post[w], i)
	}
	return i
}

// Len is the number of statements indexed.
func (x *Index) Len() int { return len(x.words) }

// Match is an indexed statement near a query.
type Match struct {
	// Entry is the statement's entry number.
	Entry int
	// Exact is set when the normalized statements are equal; Similarity is
	// the share of common words (1 for an exact match).
	Exact      bool
	Similarity float64
}

// Near returns the indexed statements that are near-duplicates of
// statement (skip excluded; -1 excludes none), most similar first, then by
// entry. Candidates come from prefix filtering, exactly: a near-duplicate
// holds one of the query's n − ⌈Threshold·n⌉ + 1 rarest words.
func (x *Index) Near(statement string, skip int) []Match {
	ws := Words(statement)
	norm := domain.NormalizeStatement(statement)
	var out []Match
	seen := map[int]bool{skip: true}
	for i, n := range x.norms {
		if n == norm && !seen[i] {
			seen[i] = true
			out = append(out, Match{Entry: i, Exact: true, Similarity: 1})
		}
	}
	if len(ws) > 0 {
		rare := slices.Clone(ws)
		slices.SortStableFunc(rare, func(a, b string) int { return len(x.post[a]) - len(x.post[b]) })
		// ⌈Threshold·n⌉ in integers: a float product such as 0.6 × 5
		// rounds up past 3.
		least := (thresholdNum*len(rare) + thresholdDen - 1) / thresholdDen
		for _, w := range rare[:len(rare)-least+1] {
			for _, j := range x.post[w] {
				if seen[j] {
					continue
				}
				seen[j] = true
				if sim := Similarity(ws, x.words[j]); sim >= Threshold {
					out = append(out, Match{Entry: j, Similarity: sim})
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b Match) int {
		if c := cmp.Compare(b.Similarity, a.Similarity); c != 0 {
			return c
		}
		return a.Entry - b.Entry
	})
	return out
}

// Card is an existing card a statement nearly repeats, as a warning names
// it: its id and statement, and how alike the two are.
type Card struct {
	ID        string `json:"id"`
	Statement string `json:"statement"`
	// Exact is set when the normalized statements are equal.
	Exact      bool    `json:"exact,omitempty"`
	Similarity float64 `json:"similarity"`
}
