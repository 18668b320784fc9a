package pack

import (
	"math"
	"path"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/palacehq/palace/domain"
)

// Query relevance. Cards are ranked here, in Go, over exactly the cards a
// request may see (docs/rationale.md says why not FTS5). queryTerms and
// ftsQuery serve FTS5 (--all-repos), tokenizing as unicode61 does.

const (
	bm25K1 = 1.2
	bm25B  = 0.75
	// maxQueryTerms bounds the distinct terms a query contributes.
	maxQueryTerms = 16
)

// stopwords are dropped from FTS5 queries: they match nearly everything and
// rank nothing.
var stopwords = wordSet(englishStopwords)

func wordSet(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
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
// input is ever FTS5 syntax) and joined with OR.
func ftsQuery(q string) string {
	terms := queryTerms(q)
	for i, t := range terms {
		terms[i] = `"` + t + `"`
	}
	return strings.Join(terms, " OR ")
}

// The relevance model, one ranking for every caller: BM25F over a card's
// fields (statement, content, triggers, cited evidence; cardDoc) against the
// request's terms (the query's, its thesaurus synonyms and the file's parts,
// weighted by source). A card's score is
//
//	Σ_q w_q · idf_q · tf'_q (k1+1) / (tf'_q + k1),  tf'_q = Σ_f W_f · tf_qf / (1 − b + b·len_f/avg_f)
//
// with idf over the ranked set. Relevance in 0..1 is the geometric mean of
// the score relative to the best card's and of its coverage of the query
// (over relCoverageFull of the query's idf weight, file words counting
// relFileCoverage): neither the best of a poor lot nor a card sharing one
// common word is relevant.

// Field weights (W_f).
const (
	relWStatement = 3.0
	relWContent   = 1.0
	relWTrigger   = 2.0
	relWEvidence  = 0.5
)

// Query term weights (w_q) by source.
const (
	relWQuery = 1.0
	relWFile  = 0.4
	// relWSynonym weighs the words the thesaurus adds to the query's.
	relWSynonym = 0.5
	// relCoverageFull is the share of the query's idf weight a card must
	// cover to count as fully on topic.
	relCoverageFull = 0.45
	// relFileCoverage is the share of a file word's score that counts as
	// covering the query.
	relFileCoverage = 0.5
	// maxRelTerms bounds the distinct terms of one request.
	maxRelTerms = 32
)

// relQuery is a request's weighted terms, indexed for scanning.
type relQuery struct {
	terms   []string
	weights []float64
	index   map[string]int
	// words are the words of the request each term came from (the first
	// one), for the why-lines a person reads: "busy", not its stem "busi".
	words map[string]string
	// pre marks the two-byte prefixes of the stemmed terms: a token whose
	// first two bytes are unmarked cannot stem to a term, so most tokens
	// are never stemmed.
	pre [1 << 10]uint64
}

// newRelQuery builds the terms of a request: the query's and the file
// path's, each with its weight (a term from both keeps the higher).
func newRelQuery(query, file string) *relQuery {
	q := &relQuery{index: map[string]int{}, words: map[string]string{}}
	for _, text := range []string{query, file} {
		scanWords(text, func(tok []byte, whole bool) {
			t := string(tok)
			if !whole {
				t = stem(t)
			}
			if _, ok := q.words[t]; !ok {
				q.words[t] = string(tok)
			}
		})
	}
	add := func(t string, w float64) {
		if i, ok := q.index[t]; ok {
			q.weights[i] = max(q.weights[i], w)
			return
		}
		if len(q.terms) == maxRelTerms {
			return
		}
		q.index[t] = len(q.terms)
		q.terms = append(q.terms, t)
		q.weights = append(q.weights, w)
		if len(t) >= 2 {
			k := uint16(t[0])<<8 | uint16(t[1])
			q.pre[k>>6] |= 1 << (k & 63)
		}
	}
	terms := tokenTerms(query)
	for _, t := range terms {
		add(t, relWQuery)
	}
	for _, t := range terms {
		for _, syn := range synonyms()[t] {
			add(syn, relWSynonym)
		}
	}
	// The file's extension says its language, which the scope policy
	// weighs; as a word ("go", "py") it would only match prose.
	if ext := path.Ext(file); ext != "" && !strings.Contains(ext, "/") {
		file = strings.TrimSuffix(file, ext)
	}
	for _, t := range tokenTerms(file) {
		add(t, relWFile)
	}
	return q
}

// word is term t as the request wrote it; a synonym the request did not
// write shows as the thesaurus has it.
func (q *relQuery) word(t int) string {
	if w, ok := q.words[q.terms[t]]; ok {
		return w
	}
	return q.terms[t]
}

func (q *relQuery) empty() bool { return q == nil || len(q.terms) == 0 }

// relevanceDoc is one document of a ranking and its fields.
type relevanceDoc struct {
	id                 string
	statement, content string
	trigger, evidence  string
}

// relFields is the number of fields of a relevanceDoc.
const relFields = 4

var relWeights = [relFields]float64{relWStatement, relWContent, relWTrigger, relWEvidence}

func (d *relevanceDoc) field(f int) string {
	switch f {
	case 0:
		return d.statement
	case 1:
		return d.content
	case 2:
		return d.trigger
	}
	return d.evidence
}

// countProfile adds the query's term counts in a text's profile to tf and
// returns the text's number of word parts.
func (q *relQuery) countProfile(p *textProfile, tf []int) int {
	if len(p.terms) > 0 {
		for i, t := range q.terms {
			tf[i] += int(p.terms[t])
		}
	}
	return p.parts
}

// relScore is one document's ranking.
type relScore struct {
	score, relative, coverage, relevance float64
	// matched are the query terms the document holds, in query order.
	matched []string
}

// rankScratch is rank's working memory, reused across requests.
type rankScratch struct {
	docs      []int
	lens, tfs []int32
	texts     []string
}

var rankScratchPool = sync.Pool{New: func() any { return new(rankScratch) }}

// rank scores docs against q. Documents matching no term are absent; term
// counts are kept only for those that match one (most do not).
func (q *relQuery) rank(docs []relevanceDoc) map[string]relScore {
	out := map[string]relScore{}
	if q.empty() || len(docs) == 0 {
		return out
	}
	nt := len(q.terms)
	var sums [relFields]int
	df := make([]int, nt)
	sc := rankScratchPool.Get().(*rankScratch)
	defer rankScratchPool.Put(sc)
	// Per matching document: its index, its field lengths and its counts.
	hitDocs, hitLens, hitTfs := sc.docs[:0], sc.lens[:0], sc.tfs[:0]
	defer func() { sc.docs, sc.lens, sc.tfs = hitDocs[:0], hitLens[:0], hitTfs[:0] }()
	tf := make([]int, relFields*nt)
	hit := make([]bool, nt)
	const chunk = 256
	texts := sc.texts[:0]
	defer func() { clear(texts[:cap(texts)]); sc.texts = texts[:0] }()
	for lo := 0; lo < len(docs); lo += chunk {
		hi := min(lo+chunk, len(docs))
		texts = texts[:0]
		for i := lo; i < hi; i++ {
			for f := range relFields {
				texts = append(texts, docs[i].field(f))
			}
		}
		profs := profilesOf(texts)
		for i := lo; i < hi; i++ {
			clear(tf)
			clear(hit)
			var lens [relFields]int32
			matches := false
			for f := range relFields {
				l := q.countProfile(profs[(i-lo)*relFields+f], tf[f*nt:(f+1)*nt])
				lens[f] = int32(l)
				sums[f] += l
				for t := range nt {
					if tf[f*nt+t] > 0 {
						hit[t], matches = true, true
					}
				}
			}
			if !matches {
				continue
			}
			for t := range nt {
				if hit[t] {
					df[t]++
				}
			}
			hitDocs = append(hitDocs, i)
			hitLens = append(hitLens, lens[:]...)
			for _, c := range tf {
				hitTfs = append(hitTfs, int32(c))
			}
		}
	}
	n := float64(len(docs))
	var avg [relFields]float64
	for f := range relFields {
		avg[f] = math.Max(1, float64(sums[f])/n)
	}
	idf := make([]float64, nt)
	ideal := 0.0
	for t := range nt {
		idf[t] = math.Log(1 + (n-float64(df[t])+0.5)/(float64(df[t])+0.5))
		if q.weights[t] == relWQuery {
			ideal += idf[t]
		}
	}
	// Without query words the file is all the request says: it counts.
	fileOnly := ideal == 0
	if fileOnly {
		for t := range nt {
			ideal += q.weights[t] * idf[t]
		}
	}
	scores := make([]relScore, len(hitDocs))
	best := 0.0
	for h := range hitDocs {
		lens, tfs := hitLens[h*relFields:(h+1)*relFields], hitTfs[h*relFields*nt:(h+1)*relFields*nt]
		s, sq := 0.0, 0.0
		var matched []string
		for t := range nt {
			tf := 0.0
			for f := range relFields {
				c := tfs[f*nt+t]
				if c == 0 {
					continue
				}
				norm := 1 - bm25B + bm25B*float64(lens[f])/avg[f]
				tf += relWeights[f] * float64(c) / norm
			}
			if tf == 0 {
				continue
			}
			matched = append(matched, q.word(t))
			v := q.weights[t] * idf[t] * tf * (bm25K1 + 1) / (tf + bm25K1)
			s += v
			if fileOnly || q.weights[t] != relWFile {
				sq += v
			} else {
				sq += v * relFileCoverage
			}
		}
		scores[h] = relScore{score: s, coverage: sq, matched: matched}
		best = math.Max(best, s)
	}
	if best == 0 {
		return out
	}
	for h, i := range hitDocs {
		sc := scores[h]
		if sc.score <= 0 {
			continue
		}
		sc.relative = sc.score / best
		sc.coverage = math.Min(1, sc.coverage/(relCoverageFull*ideal*(bm25K1+1)))
		sc.relevance = round3(math.Sqrt(sc.relative * sc.coverage))
		sc.relative, sc.coverage = round3(sc.relative), round3(sc.coverage)
		out[docs[i].id] = sc
	}
	return out
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// bm25Rank ranks docs against a plain query (no file, no language) and
// returns each matching doc's relevance.
func bm25Rank(query string, docs []relevanceDoc) map[string]float64 {
	out := map[string]float64{}
	for id, s := range newRelQuery(query, "").rank(docs) {
		out[id] = s.relevance
	}
	return out
}

// cardDoc is the relevance document of a card: its texts, its triggers,
// field and scope path words, and the evidence texts it cites (ev).
func cardDoc(c domain.Card, ev string) relevanceDoc {
	var b strings.Builder
	for _, xs := range [][]string{c.Trigger.Intents, c.Trigger.ToolNeeds, c.Scope.Paths} {
		for _, x := range xs {
			b.WriteString(x)
			b.WriteByte(' ')
		}
	}
	for _, p := range c.Trigger.Patterns {
		b.WriteString(patternWords(p))
		b.WriteByte(' ')
	}
	b.WriteString(c.Field)
	return relevanceDoc{id: c.ID, statement: c.Statement, content: c.Content, trigger: b.String(), evidence: ev}
}
