package secrets

import (
	"bytes"
	"sync"
)

// keywordSet finds every occurrence of a set of keywords in one pass over
// the text (an Aho–Corasick automaton compiled to a DFA). Matching is ASCII
// case-insensitive; rules that need exact case re-check the bytes themselves.
//
// Why not bytes.Index per keyword: the rule set has ~40 keywords, and 40
// passes over a 30 MB box cost more than the whole scan budget. One DFA pass
// is a table lookup per byte.
type keywordSet struct {
	// class maps a byte to its column in delta: every byte that occurs in a
	// keyword (after folding) gets its own class, all others share class 0.
	class  [256]uint8
	nclass int
	// delta is the full DFA transition table, nstates × nclass. Entries are
	// row offsets (state × nclass), not state numbers, so the hot loop does
	// no multiplication.
	delta []uint32
	// accept[row offset] is true where some keyword ends; checked per byte
	// instead of out, whose slice header is three words to load.
	accept []bool
	// out lists, per state, the keywords that end there (including those
	// reached through failure links); nil for most states.
	out [][]int
	// words are the folded keywords, indexed as in out.
	words []string
}

func fold(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + ('a' - 'A')
	}
	return b
}

func newKeywordSet(words []string) *keywordSet {
	ks := &keywordSet{}
	for _, w := range words {
		f := make([]byte, len(w))
		for i := 0; i < len(w); i++ {
			f[i] = fold(w[i])
		}
		ks.words = append(ks.words, string(f))
	}
	next := uint8(1)
	for _, w := range ks.words {
		for i := 0; i < len(w); i++ {
			c := w[i]
			if ks.class[c] == 0 {
				ks.class[c] = next
				if 'a' <= c && c <= 'z' {
					ks.class[c-('a'-'A')] = next
				}
				next++
			}
		}
	}
	ks.nclass = int(next)

	// Trie with -1 for "no edge yet".
	trie := [][]int{make([]int, ks.nclass)}
	for i := range trie[0] {
		trie[0][i] = -1
	}
	ks.out = [][]int{nil}
	for wi, w := range ks.words {
		s := 0
		for i := 0; i < len(w); i++ {
			c := ks.class[w[i]]
			if trie[s][c] < 0 {
				row := make([]int, ks.nclass)
				for j := range row {
					row[j] = -1
				}
				trie = append(trie, row)
				ks.out = append(ks.out, nil)
				trie[s][c] = len(trie) - 1
			}
			s = trie[s][c]
		}
		ks.out[s] = append(ks.out[s], wi)
	}

	// Breadth-first: failure links, then fill missing edges so the table is
	// a complete DFA.
	fail := make([]int, len(trie))
	queue := []int{}
	for c := 0; c < ks.nclass; c++ {
		if t := trie[0][c]; t >= 0 {
			fail[t] = 0
			queue = append(queue, t)
		} else {
			trie[0][c] = 0
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		ks.out[s] = append(ks.out[s], ks.out[fail[s]]...)
		for c := 0; c < ks.nclass; c++ {
			if t := trie[s][c]; t >= 0 {
				fail[t] = trie[fail[s]][c]
				queue = append(queue, t)
			} else {
				trie[s][c] = trie[fail[s]][c]
			}
		}
	}
	ks.delta = make([]uint32, len(trie)*ks.nclass)
	ks.accept = make([]bool, len(trie)*ks.nclass)
	for s, row := range trie {
		for c, t := range row {
			ks.delta[s*ks.nclass+c] = uint32(t * ks.nclass)
		}
		ks.accept[s*ks.nclass] = len(ks.out[s]) > 0
	}
	return ks
}

// each calls fn(keyword index, start offset) for every keyword occurrence,
// in order of the occurrence's end.
//
// A text of more than a few KiB is walked as two halves at once, split
// after a '\n': each step of the automaton waits for the table load of the
// step before, so two independent walks interleaved take little more time
// than one. No keyword holds a '\n', so after one the automaton is back at
// its start and the second half's walk is exactly the single walk's. The
// second half's occurrences are held back until the first half's are
// reported, to keep the order.
func (ks *keywordSet) each(text []byte, fn func(word, start int)) {
	mid := -1
	if len(text) >= 4<<10 && ks.class['\n'] == 0 {
		if i := bytes.IndexByte(text[len(text)/2:], '\n'); i >= 0 {
			mid = len(text)/2 + i + 1
		}
	}
	if mid < 0 || mid >= len(text) {
		ks.walk(text, 0, 0, fn)
		return
	}
	a, b := text[:mid], text[mid:]
	n := min(len(a), len(b))
	lp := laterPool.Get().(*[]kwHit)
	later := (*lp)[:0]
	defer func() { *lp = later[:0]; laterPool.Put(lp) }()
	delta, class, accept, nc := ks.delta, &ks.class, ks.accept, uint32(ks.nclass)
	var ra, rb uint32
	a0, b0 := a[:n], b[:n]
	for i := range a0 {
		ra = delta[ra+uint32(class[a0[i]])]
		rb = delta[rb+uint32(class[b0[i]])]
		if accept[ra] {
			for _, w := range ks.out[ra/nc] {
				fn(w, i-len(ks.words[w])+1)
			}
		}
		if accept[rb] {
			for _, w := range ks.out[rb/nc] {
				later = append(later, kwHit{w, mid + i - len(ks.words[w]) + 1})
			}
		}
	}
	ks.walk(a[n:], n, ra, fn)
	for _, h := range later {
		fn(h.word, h.start)
	}
	ks.walk(b[n:], mid+n, rb, fn)
}

type kwHit struct{ word, start int }

// laterPool keeps the held-back occurrences' buffers: a chunk of letters
// has tens of thousands of them (short keywords such as "sk" are common).
var laterPool = sync.Pool{New: func() any { return new([]kwHit) }}

// walk runs the automaton over text from row, reporting occurrences with
// their offsets shifted by base.
func (ks *keywordSet) walk(text []byte, base int, row uint32, fn func(word, start int)) {
	delta, class, accept, nc := ks.delta, &ks.class, ks.accept, uint32(ks.nclass)
	for i, b := range text {
		row = delta[row+uint32(class[b])]
		if accept[row] {
			for _, w := range ks.out[row/nc] {
				fn(w, base+i-len(ks.words[w])+1)
			}
		}
	}
}
