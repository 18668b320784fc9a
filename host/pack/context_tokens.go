package pack

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
	"github.com/palacehq/palace/internal/cache"
)

// Tokens of the relevance model, for queries, file paths and card texts
// alike. A word is a run of letters, digits and underscores, joined by '.',
// '/', '-' or ':' between word characters (k8s.io/client-go is one word). It
// yields its parts, split at joiners, underscores and camelCase humps
// (HTTPServer → http, server), lower-cased and Snowball-stemmed, and, with
// several parts, the whole word as one more token, so an exact identifier
// counts more than its pieces. CJK runs are read as bigrams (scanCJK).

// englishStopwords are English function words.
const englishStopwords = `a an and are as at be but by for from has have how i if in into is it its of on or
	that the their then there these this to was we were what when where which who why will with you your`

// relStopwords are never terms of the relevance model: English function
// words and words too generic in engineering requests to rank anything.
// They are checked before stemming.
var relStopwords = wordSet(englishStopwords + `
		do does did doing done not no can could should would must may might shall am been being me my our us
		they them he she his her so than too very just also only any all some each every other such same own
		about above after again against before below between both during further here off once out over under
		until up down while more most few nor now get got getting set want wants need needs needed make makes
		made making run runs running ran use uses used using add adds added adding new like way thing things
		sure please let lets one two etc e g ie eg via per else still even much many well really something
		anything everything`)

// stems holds the stems of the words seen, bounded.
var stems = cache.Memo[string, string]{Max: 1 << 16}

// stem is the Snowball English stem of a lower-cased ASCII word (other
// words are their own stem), cached for the process.
func stem(w string) string {
	if s, ok := stems.Get(cache.Forever{}, w); ok {
		return s
	}
	s := w
	if isASCIILetters(w) {
		s = english.Stem(w, true)
		if s == "" {
			s = w
		}
	}
	stems.Put(cache.Forever{}, strings.Clone(w), s) // w may be part of a long text
	return s
}

func isASCIILetters(w string) bool {
	for i := 0; i < len(w); i++ {
		if c := w[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	return len(w) > 0
}

// scanWords calls fn for every token of s: each part of each word
// (lower-cased, not stemmed; stopwords included, so callers can count
// length) with whole false, then the whole word with whole true when it
// has more than one part. Buffers passed to fn are reused: copy to keep.
func scanWords(s string, fn func(tok []byte, whole bool)) {
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
	for i := 0; i < len(s); {
		r, w := rune(s[i]), 1
		var isWord, upper, lower bool
		if r < utf8.RuneSelf {
			// ASCII, most of every text: classified without the unicode tables.
			upper = 'A' <= r && r <= 'Z'
			lower = 'a' <= r && r <= 'z'
			isWord = upper || lower || '0' <= r && r <= '9'
		} else {
			r, w = utf8.DecodeRuneInString(s[i:])
			if isCJK(r) {
				// A CJK run is written without spaces between its words:
				// it is a word of its own, read as overlapping bigrams.
				flushWord()
				i = scanCJK(s, i, fn)
				continue
			}
			upper, lower = unicode.IsUpper(r), unicode.IsLower(r)
			isWord = unicode.IsLetter(r) || unicode.IsDigit(r)
		}
		i += w
		switch {
		case r == '_' || r < utf8.RuneSelf && isJoiner(byte(r)):
			// A joiner inside a word splits parts; at a word's start it is
			// punctuation.
			if len(word) == 0 {
				continue
			}
			if r != '_' && (i >= len(s) || !isWordStart(s[i:])) {
				flushWord()
				continue
			}
			flushPart()
			if len(word) < len(wbuf) {
				word = append(word, byte(r))
			}
		case isWord:
			lr := r
			if r >= utf8.RuneSelf {
				lr = unicode.ToLower(r) // title-case letters too (ǈ → ǉ)
			} else if upper {
				lr = r + ('a' - 'A')
			}
			// camelCase hump: lower→Upper, or the last capital of a run of
			// capitals followed by a lower-case letter (HTTPServer).
			if upper && prev != 0 && !prevUpper && isLetter(prev) {
				flushPart()
			} else if lower && prevUpper && len(part) > 1 {
				last, lw := utf8.DecodeLastRune(part)
				part = part[:len(part)-lw]
				flushPart()
				part = utf8.AppendRune(part, last)
				prev, prevUpper = last, true
			}
			if lr < utf8.RuneSelf {
				if len(part) < len(pbuf) {
					part = append(part, byte(lr))
				}
				if len(word) < len(wbuf) {
					word = append(word, byte(lr))
				}
			} else {
				if len(part)+utf8.RuneLen(lr) <= len(pbuf) {
					part = utf8.AppendRune(part, lr)
				}
				if len(word)+utf8.RuneLen(lr) <= len(wbuf) {
					word = utf8.AppendRune(word, lr)
				}
			}
			prev, prevUpper = r, upper
			if !upper {
				// The lower-case letters and digits that follow cannot start
				// a part: take the run whole.
				j := i
				for j < len(s) && ('a' <= s[j] && s[j] <= 'z' || '0' <= s[j] && s[j] <= '9') {
					j++
				}
				if j > i {
					run := s[i:j]
					part = append(part, run[:min(len(run), len(pbuf)-len(part))]...)
					word = append(word, run[:min(len(run), len(wbuf)-len(word))]...)
					prev, i = rune(s[j-1]), j
				}
			}
		default:
			flushWord()
		}
	}
	flushWord()
}

// isCJK says whether r is a Han ideograph, kana or Hangul: scripts written
// without spaces between words.
func isCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// scanCJK calls fn with each pair of neighbouring runes of the CJK run of s
// at byte i as one part (数据库锁 → 数据, 据库, 库锁), or the lone rune of a
// one-rune run, and returns the byte after the run. Without a dictionary a
// bigram is what two spellings of a word share.
func scanCJK(s string, i int, fn func(tok []byte, whole bool)) int {
	var buf [8]byte
	prev, pw := utf8.DecodeRuneInString(s[i:])
	i += pw
	single := true
	for i < len(s) {
		r, w := utf8.DecodeRuneInString(s[i:])
		if !isCJK(r) {
			break
		}
		fn(utf8.AppendRune(utf8.AppendRune(buf[:0], prev), r), false)
		prev, single = r, false
		i += w
	}
	if single {
		fn(utf8.AppendRune(buf[:0], prev), false)
	}
	return i
}

func isJoiner(c byte) bool { return c == '.' || c == '/' || c == '-' || c == ':' }

// isWordStart says whether s starts with a letter, digit or underscore.
func isWordStart(s string) bool {
	if c := s[0]; c < utf8.RuneSelf {
		return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
	}
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

func isLetter(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z'
	}
	return unicode.IsLetter(r)
}

// tokenTerms is the terms of s as the relevance model indexes them: stems
// of the parts and whole compound words, stopwords and one-character
// parts dropped, in order of first appearance, each once.
func tokenTerms(s string) []string {
	var out []string
	seen := map[string]bool{}
	scanWords(s, func(tok []byte, whole bool) {
		t := string(tok)
		if !whole {
			if len(t) < 2 || relStopwords[t] {
				return
			}
			t = stem(t)
		}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	})
	return out
}

// patternWords turns a trigger pattern into the literal words it holds:
// escaped punctuation becomes itself and class escapes (\b, \w…) spaces.
func patternWords(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == '\\' && i+1 < len(p) {
			n := p[i+1]
			i++
			if n >= 'a' && n <= 'z' || n >= 'A' && n <= 'Z' {
				b.WriteByte(' ')
			} else {
				b.WriteByte(n)
			}
			continue
		}
		switch c {
		case '[', ']', '(', ')', '{', '}', '*', '+', '?', '|', '^', '$':
			b.WriteByte(' ')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
