package pack

import (
	"slices"
	"testing"
	"unicode"
	"unicode/utf8"
)

// scanWordsPlain is scanWords written rune by rune with the unicode
// tables only, as the reference its fast paths must agree with. It calls fn for every token of s: each part of each word
// (lower-cased, not stemmed; stopwords included, so callers can count
// length) with whole false, then the whole word with whole true when it
// has more than one part. Buffers passed to fn are reused: copy to keep.
func scanWordsPlain(s string, fn func(tok []byte, whole bool)) {
	var word, part []byte
	var wbuf, pbuf [96]byte
	word, part = wbuf[:0], pbuf[:0]
	parts := 0
	var prev rune // previous rune of the current part, 0 at a part start
	prevUpper := false
	flushPart := func() {
		if len(part) > 0 {
			fn(part, false)
			parts++
		}
		part = pbuf[:0]
		prev, prevUpper = 0, false
	}
	flushWord := func() {
		flushPart()
		// Trailing joiners are punctuation, not part of the word.
		w := word
		for len(w) > 0 && isJoiner(w[len(w)-1]) {
			w = w[:len(w)-1]
		}
		if parts > 1 && len(w) > 0 {
			fn(w, true)
		}
		word, parts = wbuf[:0], 0
	}
	// A CJK run: its length so far and its last rune.
	cjkRun, cjkPrev := 0, rune(0)
	endCJK := func() {
		if cjkRun == 1 {
			fn([]byte(string(cjkPrev)), false)
		}
		cjkRun = 0
	}
	for i := 0; i < len(s); {
		r, w := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, w = utf8.DecodeRuneInString(s[i:])
		}
		i += w
		if unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r) {
			if cjkRun == 0 {
				flushWord()
			} else {
				fn([]byte(string([]rune{cjkPrev, r})), false)
			}
			cjkRun, cjkPrev = cjkRun+1, r
			continue
		}
		endCJK()
		switch {
		case r == '_' || isJoiner(byte(r)) && r < utf8.RuneSelf:
			// A joiner inside a word splits parts; at a word's start it is
			// punctuation.
			if len(word) == 0 {
				continue
			}
			if r != '_' && (i >= len(s) || !plainWordStart(s[i:])) {
				flushWord()
				continue
			}
			flushPart()
			if len(word) < len(wbuf) {
				word = append(word, byte(r))
			}
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			upper := unicode.IsUpper(r)
			lr := unicode.ToLower(r)
			// camelCase hump: lower→Upper, or the last capital of a run of
			// capitals followed by a lower-case letter (HTTPServer).
			if upper && prev != 0 && !prevUpper && unicode.IsLetter(prev) {
				flushPart()
			} else if !upper && unicode.IsLower(r) && prevUpper && len(part) > 1 {
				last, lw := utf8.DecodeLastRune(part)
				part = part[:len(part)-lw]
				flushPart()
				part = utf8.AppendRune(part, last)
				prev, prevUpper = last, true
			}
			if len(part)+utf8.RuneLen(lr) <= len(pbuf) {
				part = utf8.AppendRune(part, lr)
			}
			if len(word)+utf8.RuneLen(lr) <= len(wbuf) {
				word = utf8.AppendRune(word, lr)
			}
			prev, prevUpper = r, upper
		default:
			flushWord()
		}
	}
	endCJK()
	flushWord()
}

func plainWordStart(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

type scannedToken struct {
	tok   string
	whole bool
}

func scanAll(scan func(string, func([]byte, bool)), s string) []scannedToken {
	var out []scannedToken
	scan(s, func(tok []byte, whole bool) { out = append(out, scannedToken{string(tok), whole}) })
	return out
}

// FuzzScanWordsMatchesPlain: the ASCII fast paths of scanWords give the
// same tokens, in the same order, as the rune-by-rune reading.
func FuzzScanWordsMatchesPlain(f *testing.F) {
	for _, s := range []string{"", "SQLite WAL-mode, busy_timeout=30000!", "Ünïcode ÉCOLE straße ſ K", "\xff\xfeabc\x80",
		"HTTPServerURL2x useEffect zz_generated.deepcopy.go", "k8s.io/client-go pkg/kubelet/eviction_manager_test.go",
		"aB9cDEFgh_ij.kl-MN:op/ ÀbcDé x86_64 v1.2.3", "a/b/.c-d:e_", "__init__.py", "日本語のテキスト wal2 WAL",
		"使用WAL模式避免数据库锁", "锁 a锁b 한국어abc_데이터", "x.日本/y-語"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := scanAll(scanWords, s), scanAll(scanWordsPlain, s); !slices.Equal(got, want) {
			t.Fatalf("scanWords(%q) = %+v, want %+v", s, got, want)
		}
	})
}

// count is the relevance model's reading of a text straight from its
// words: the reference a cached profile must agree with. It adds the
// query's term counts in s to tf and returns the number of word parts of s.
func (q *relQuery) count(s string, tf []int) int {
	n := 0
	scanWords(s, func(tok []byte, whole bool) {
		if whole {
			if i, ok := q.index[string(tok)]; ok {
				tf[i]++
			}
			return
		}
		n++
		if len(tok) < 2 {
			return
		}
		k := uint16(tok[0])<<8 | uint16(tok[1])
		if q.pre[k>>6]&(1<<(k&63)) == 0 || relStopwords[string(tok)] {
			return
		}
		if i, ok := q.index[stem(string(tok))]; ok {
			tf[i]++
		}
	})
	return n
}

// FuzzProfileMatchesScan: a text's cached profile gives the counts and the
// length that reading the text itself gives, for a query made of the
// text's own words and others.
func FuzzProfileMatchesScan(f *testing.F) {
	for _, s := range []string{"", "Listeners pinned useEffect HTTPServer zz_generated.deepcopy.go", "run the tests, then fix the flaky runner",
		"k8s.io/client-go pkg/kubelet/eviction_manager_test.go", "Ünïcode ÉCOLE straße", "a b c d"} {
		f.Add(s, "listener pin test flaky kubelet eviction manager")
	}
	f.Fuzz(func(t *testing.T, text, query string) {
		q := newRelQuery(query+" "+text, "")
		want := make([]int, len(q.terms))
		got := make([]int, len(q.terms))
		wn := q.count(text, want)
		gn := q.countProfile(profileOf(text), got)
		if wn != gn || !slices.Equal(want, got) {
			t.Fatalf("text %q, query %q: profile %d parts %v, scan %d parts %v", text, query, gn, got, wn, want)
		}
	})
}

// A CJK word matches inside a run of CJK text written without spaces,
// and a Latin query's terms are what they were.
func TestCJKBigrams(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want []string
	}{
		{"数据库锁", []string{"数据", "据库", "库锁"}},
		{"使用WAL模式避免数据库锁", []string{"使用", "wal", "模式", "式避", "避免", "免数", "数据", "据库", "库锁"}},
		{"锁", []string{"锁"}},
		{"SQLite busy_timeout", []string{"sq", "lite", "sqlite", "busi", "timeout", "busy_timeout"}},
	} {
		if got := tokenTerms(tt.s); !slices.Equal(got, tt.want) {
			t.Errorf("tokenTerms(%q) = %q, want %q", tt.s, got, tt.want)
		}
	}
	docs := []relevanceDoc{
		{id: "wal", statement: "使用WAL模式避免数据库锁"},
		{id: "other", statement: "提交前运行测试"},
	}
	got := bm25Rank("数据库锁", docs)
	if got["wal"] <= 0 || got["other"] != 0 {
		t.Errorf("relevance of 数据库锁 = %v, want the WAL card only", got)
	}
}
