package secrets

import (
	"bytes"
	"math"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

//go:generate go run -C gen . -out ../gitleaks_rules.go

// A community rule's keyword occurrence marks a window (its line, cut to
// glBefore/glAfter bytes), touching windows of one rule merge, and the
// rule's regex, compiled on first use, runs once per merged window.
const (
	glBefore = 256  // the names assignment-shaped rules accept before a keyword
	glAfter  = 2048 // the longest tokens, with room to spare
)

// glRule is one rule taken from gitleaks' configuration.
type glRule struct {
	id, desc, regex string
	keywords        []string
	entropy         float64 // when not zero, the secret's must exceed it
	// secretGroup holds the secret; 0: the first non-empty group, else the match.
	secretGroup int
	allow       []glAllow

	once sync.Once
	re   *regexp.Regexp
	rule *rule
}

// glAllow is an allowlist: a finding is dropped when its target (the
// secret, the whole match or the line) matches one of the regexes, or the
// secret contains a stopword; with and set, both must hold.
type glAllow struct {
	and       bool
	target    string // "", "match" or "line"
	regexes   []string
	stopwords []string

	once sync.Once
	re   *regexp.Regexp
}

func (r *glRule) compiled() *regexp.Regexp {
	r.once.Do(func() { r.re = regexp.MustCompile(r.regex) })
	return r.re
}

func (a *glAllow) compiled() *regexp.Regexp {
	a.once.Do(func() {
		if len(a.regexes) > 0 {
			a.re = regexp.MustCompile("(?:" + strings.Join(a.regexes, ")|(?:") + ")")
		}
	})
	return a.re
}

// allows reports whether a excuses a finding with this secret, match and line.
func (a *glAllow) allows(secret, match, line []byte) bool {
	target := secret
	switch a.target {
	case "match":
		target = match
	case "line":
		target = line
	}
	var byRegex, byStop bool
	if re := a.compiled(); re != nil {
		byRegex = re.Match(target)
	}
	if len(a.stopwords) > 0 {
		low := bytes.ToLower(secret)
		for _, w := range a.stopwords {
			if bytes.Contains(low, []byte(w)) {
				byStop = true
				break
			}
		}
	}
	if a.and {
		return (len(a.regexes) == 0 || byRegex) && (len(a.stopwords) == 0 || byStop)
	}
	return byRegex || byStop
}

// glPos is one keyword occurrence for a community rule.
type glPos struct {
	rule       int // index in gitleaksRules
	start, end int // the keyword's span
}

// matchGitleaks runs the community rules at their keyword occurrences and
// appends what they find to hits.
func matchGitleaks(text []byte, pos []glPos, hits []hit) []hit {
	if len(pos) == 0 {
		return hits
	}
	pos = groupByRule(pos)
	for i := 0; i < len(pos); {
		r := &gitleaksRules[pos[i].rule]
		ws, we := window(text, pos[i])
		j := i + 1
		for ; j < len(pos) && pos[j].rule == pos[i].rule; j++ {
			s, e := window(text, pos[j])
			if s <= we {
				we = max(we, e)
				continue
			}
			hits = r.scan(text, ws, we, hits)
			ws, we = s, e
		}
		hits = r.scan(text, ws, we, hits)
		i = j
	}
	return hits
}

// groupByRule orders occurrences by rule, stably (a counting sort), so each
// rule's windows merge in one sweep.
func groupByRule(pos []glPos) []glPos {
	counts := make([]int, len(gitleaksRules)+1)
	for _, p := range pos {
		counts[p.rule+1]++
	}
	for i := 1; i < len(counts); i++ {
		counts[i] += counts[i-1]
	}
	out := make([]glPos, len(pos))
	for _, p := range pos {
		out[counts[p.rule]] = p
		counts[p.rule]++
	}
	return out
}

// window is the span a rule's regex reads around a keyword: the keyword's
// line, cut to glBefore bytes before and glAfter bytes after it.
func window(text []byte, p glPos) (int, int) {
	lo := max(0, p.start-glBefore)
	ws := lo
	if k := bytes.LastIndexByte(text[lo:p.start], '\n'); k >= 0 {
		ws = lo + k + 1
	}
	hi := min(len(text), p.end+glAfter)
	we := hi
	if k := bytes.IndexByte(text[p.end:hi], '\n'); k >= 0 {
		we = p.end + k
	}
	return ws, we
}

func (r *glRule) scan(text []byte, ws, we int, hits []hit) []hit {
	win := text[ws:we]
	// A `$` must not accept a token cut short by a window's cut.
	hardEnd := we < len(text) && text[we] != '\n'
	for _, m := range r.compiled().FindAllSubmatchIndex(win, -1) {
		if hardEnd && m[1] == len(win) {
			continue
		}
		s, e := m[0], m[1]
		for e > s && win[e-1] == '\n' {
			e--
		}
		if g := r.secretGroup; g > 0 {
			if 2*g+1 < len(m) && m[2*g] >= 0 {
				s, e = m[2*g], m[2*g+1]
			}
		} else {
			for g := 1; 2*g+1 < len(m); g++ {
				if m[2*g] >= 0 && m[2*g+1] > m[2*g] {
					s, e = m[2*g], m[2*g+1]
					break
				}
			}
		}
		if e <= s {
			continue
		}
		secret := win[s:e]
		if r.entropy != 0 && glEntropy(secret) <= r.entropy {
			continue
		}
		if r.allowed(secret, win[m[0]:m[1]], win) {
			continue
		}
		hits = append(hits, hit{rule: r.rule, start: ws + s, end: ws + e})
	}
	return hits
}

// allowed applies the global and the rule's allowlists; a "line" target is
// the window, so a long line of matches stays linear.
func (r *glRule) allowed(secret, match, line []byte) bool {
	if gitleaksAllow.allows(secret, match, line) {
		return true
	}
	for i := range r.allow {
		if r.allow[i].allows(secret, match, line) {
			return true
		}
	}
	return false
}

// glEntropy is gitleaks' entropy (runes over a length in bytes), so its
// thresholds carry over exactly.
func glEntropy(s []byte) float64 {
	if len(s) == 0 {
		return 0
	}
	counts := map[rune]int{}
	for rest := s; len(rest) > 0; {
		r, n := utf8.DecodeRune(rest)
		counts[r]++
		rest = rest[n:]
	}
	inv := 1 / float64(len(s))
	var h float64
	for _, c := range counts {
		f := float64(c) * inv
		h -= f * math.Log2(f)
	}
	return h
}
