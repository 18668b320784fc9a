package host

import (
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Query relevance. Text ranking of the visible cards happens here, in Go,
// over exactly the cards a request may see: FTS5 over cards_fts would rank
// the matches of every repository of the palace before the anchor filter
// drops them, which costs O(matches in the whole palace) — 5–17 ms at 10k
// cards for common words, measured — while the visible set is a few hundred
// cards. The tokenizer follows FTS5's unicode61 (lower-cased runs of letters
// and digits) and the score is BM25 (k1 1.2, b 0.75) with the statement
// weighted twice the content, as the bm25(cards_fts, 2.0, 1.0) the
// --all-repos path asks FTS5 for. Document frequencies come from the
// visible set, so a term common here ranks low here.

const (
	bm25K1 = 1.2
	bm25B  = 0.75
	// maxQueryTerms bounds the distinct terms a query contributes.
	maxQueryTerms = 16
)

// stopwords are dropped from queries: they match nearly everything and
// rank nothing (and make FTS5 walk its longest doclists).
var stopwords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an and are as at be but by for from has have how i if in into is it its of on or
		that the their then there these this to was we were what when where which who why will with you your`) {
		stopwords[w] = true
	}
}

// queryTerms splits q as unicode61 would: lower-cased runs of letters and
// digits, at least two runes, stopwords dropped, first occurrences only, at
// most maxQueryTerms.
func queryTerms(q string) []string {
	words := strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	var out []string
	for _, w := range words {
		if utf8.RuneCountInString(w) < 2 || stopwords[w] || slices.Contains(out, w) {
			continue
		}
		out = append(out, w)
		if len(out) == maxQueryTerms {
			break
		}
	}
	return out
}

// ftsQuery is the FTS5 expression of a query: its terms quoted (so no user
// input is ever FTS5 syntax) and joined with op ("OR" or "AND").
func ftsQuery(q string) string { return ftsExpr(queryTerms(q), "OR") }

func ftsExpr(terms []string, op string) string {
	quoted := make([]string, len(terms))
	for i, t := range terms {
		quoted[i] = `"` + t + `"`
	}
	return strings.Join(quoted, " "+op+" ")
}

// relevanceDoc is one document of a ranking: an id and two weighted fields.
type relevanceDoc struct {
	id                 string
	statement, content string
}

// bm25Rank scores docs against terms and returns each matching doc's score
// divided by the best score (rounded to 3 decimals, so 1 is the best
// match); docs matching no term are absent.
func bm25Rank(terms []string, docs []relevanceDoc) map[string]float64 {
	out := map[string]float64{}
	if len(terms) == 0 || len(docs) == 0 {
		return out
	}
	index := make(map[string]int, len(terms))
	for i, t := range terms {
		index[t] = i
	}
	// Per doc: the statement's and the content's length in tokens and term
	// counts, in flat arrays (a ranking reads up to a few thousand docs).
	nt := len(terms)
	lenS := make([]int, len(docs))
	lenC := make([]int, len(docs))
	tfS := make([]int, len(docs)*nt)
	tfC := make([]int, len(docs)*nt)
	df := make([]int, nt)
	var sumS, sumC int
	for i, d := range docs {
		lenS[i] = countTerms(d.statement, index, tfS[i*nt:(i+1)*nt])
		lenC[i] = countTerms(d.content, index, tfC[i*nt:(i+1)*nt])
		sumS += lenS[i]
		sumC += lenC[i]
		for t := range nt {
			if tfS[i*nt+t]+tfC[i*nt+t] > 0 {
				df[t]++
			}
		}
	}
	n := float64(len(docs))
	avgS := math.Max(1, float64(sumS)/n)
	avgC := math.Max(1, float64(sumC)/n)
	idf := make([]float64, nt)
	for t := range nt {
		idf[t] = math.Log(1 + (n-float64(df[t])+0.5)/(float64(df[t])+0.5))
	}
	part := func(tf, length int, avg float64) float64 {
		if tf == 0 {
			return 0
		}
		f := float64(tf)
		return f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*float64(length)/avg))
	}
	scores := make([]float64, len(docs))
	best := 0.0
	for i := range docs {
		s := 0.0
		for t := range nt {
			s += idf[t] * (2*part(tfS[i*nt+t], lenS[i], avgS) + part(tfC[i*nt+t], lenC[i], avgC))
		}
		scores[i] = s
		best = math.Max(best, s)
	}
	if best == 0 {
		return out
	}
	for i, d := range docs {
		if scores[i] > 0 {
			out[d.id] = math.Round(scores[i]/best*1000) / 1000
		}
	}
	return out
}

// countTerms tokenizes s like unicode61 — runs of letters and digits,
// lower-cased — without allocating, adds the indexed terms' counts to tf
// and returns the number of tokens. ASCII, most of any text, skips the
// unicode tables.
func countTerms(s string, index map[string]int, tf []int) int {
	var buf [64]byte
	tok := buf[:0]
	long := false
	length := 0
	flush := func() {
		if len(tok) > 0 || long {
			length++
			if !long {
				if i, ok := index[string(tok)]; ok {
					tf[i]++
				}
			}
		}
		tok, long = buf[:0], false
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case 'a' <= c && c <= 'z' || '0' <= c && c <= '9':
			case 'A' <= c && c <= 'Z':
				c += 'a' - 'A'
			default:
				flush()
				continue
			}
			if len(tok) == len(buf) {
				long = true // longer than any query term can be; counts as one token
				continue
			}
			tok = append(tok, c)
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		i += w
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			continue
		}
		r = unicode.ToLower(r)
		if len(tok)+utf8.RuneLen(r) > len(buf) {
			long = true
			continue
		}
		tok = utf8.AppendRune(tok, r)
	}
	flush()
	return length
}
