package secrets

import (
	"bytes"
	"slices"
	"sync"
)

// keywordSet finds every occurrence of its keywords, ASCII
// case-insensitively, in one pass: an Aho–Corasick automaton compiled to a
// DFA, one table lookup per byte. Rules that need exact case re-check.
type keywordSet struct {
	// class maps a byte to its column in delta; bytes in no keyword share 0.
	class  [256]uint8
	nclass int
	// delta is the DFA, nstates × nclass, holding row offsets (state ×
	// nclass) so the hot loop does no multiplication.
	delta  []uint32
	accept []bool   // by row offset: some keyword ends here
	out    [][]int  // per state, the keywords ending there
	words  []string // folded, indexed as in out
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

	// The trie, then the DFA, in one flat table allocated once at its exact
	// size (the states are the keywords' distinct prefixes).
	const none = ^uint32(0)
	nc := ks.nclass
	nstates := countPrefixes(ks.words) + 1
	trie := make([]uint32, nstates*nc)
	for i := range trie {
		trie[i] = none
	}
	ks.out = make([][]int, nstates)
	newState := uint32(1)
	for wi, w := range ks.words {
		s := 0
		for i := 0; i < len(w); i++ {
			c := int(ks.class[w[i]])
			if trie[s*nc+c] == none {
				trie[s*nc+c] = newState
				newState++
			}
			s = int(trie[s*nc+c])
		}
		ks.out[s] = append(ks.out[s], wi)
	}

	// Breadth-first: failure links, and missing edges filled to a complete DFA.
	fail := make([]uint32, nstates)
	queue := make([]uint32, 0, nstates)
	for c := 0; c < nc; c++ {
		if t := trie[c]; t != none {
			queue = append(queue, t)
		} else {
			trie[c] = 0
		}
	}
	for q := 0; q < len(queue); q++ {
		s := int(queue[q])
		if f := ks.out[fail[s]]; len(f) > 0 {
			ks.out[s] = append(ks.out[s], f...)
		}
		for c := 0; c < nc; c++ {
			if t := trie[s*nc+c]; t != none {
				fail[t] = trie[int(fail[s])*nc+c]
				queue = append(queue, t)
			} else {
				trie[s*nc+c] = trie[int(fail[s])*nc+c]
			}
		}
	}
	// State numbers become row offsets.
	for i, t := range trie {
		trie[i] = t * uint32(nc)
	}
	ks.delta = trie
	ks.accept = make([]bool, nstates*nc)
	for s := range nstates {
		ks.accept[s*nc] = len(ks.out[s]) > 0
	}
	return ks
}

// countPrefixes counts the distinct non-empty prefixes of words.
func countPrefixes(words []string) int {
	sorted := slices.Clone(words)
	slices.Sort(sorted)
	n, prev := 0, ""
	for _, w := range sorted {
		lcp := 0
		for lcp < len(w) && lcp < len(prev) && w[lcp] == prev[lcp] {
			lcp++
		}
		n += len(w) - lcp
		prev = w
	}
	return n
}

// each calls fn(keyword index, start offset) for every occurrence, in order
// of its end. A longer text is walked as two interleaved halves split after
// a '\n' (where the automaton is back at its start, no keyword holding one),
// hiding each step's table-load latency; the second half's occurrences are
// held back to keep the order.
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

// laterPool keeps the buffers of held-back occurrences, which are many.
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
