// Package secrets is palace's one secret scanner, used by `palace mailbox
// file` and `check` (PM003) and the promotion floor. It owns the rules, the
// redaction and the allow pragma; it is pure over bytes and must not touch
// the filesystem, the store or any policy.
//
// palace's own rules find provider tokens by prefix, PEM private keys, JWTs
// by their decoded header, and high-entropy values assigned to secret names.
// Some two hundred community rules are generated from gitleaks' default
// configuration at a pinned version (gitleaks_rules.go, `go generate`; MIT,
// see NOTICE); where both find a secret, palace's rule reports it. Lines with
// escapes or invisible format characters are also read decoded.
//
// One keyword-automaton pass finds where a rule can match, and rules read
// only a bounded window there, so cost is linear in the text. A line holding
// [AllowPragma] is exempt (a multi-line match: its first line). Lines and
// byte columns are 1-based; a '\r' before '\n' is part of the line. Findings
// never carry the secret, only a redacted form.
package secrets

import (
	"bytes"
	"math"
	"sort"
	"strings"
	"unicode/utf8"
)

// AllowPragma exempts the line it appears on, for a deliberate fixture.
const AllowPragma = "palace:allow-secret"

// Finding is one secret found in a text.
type Finding struct {
	Rule        string `json:"rule"` // stable id, e.g. "aws-access-key-id"
	Description string `json:"description"`
	Offset      int    `json:"offset"` // bytes into the scanned text
	Length      int    `json:"length"` // bytes
	Line        int    `json:"line"`
	Column      int    `json:"column"`
	Redacted    string `json:"redacted"` // safe to print: AKIA************MPLE
}

// Rule describes one rule of the scanner.
type Rule struct {
	ID          string `json:"id"` // stable across releases
	Description string `json:"description"`
}

// Rules returns the scanner's rules in a stable order.
func Rules() []Rule {
	build()
	out := make([]Rule, len(ruleTable))
	for i, r := range ruleTable {
		out[i] = Rule{ID: r.id, Description: r.desc}
	}
	return out
}

// Scan returns the secrets in text, ordered by offset; nil when there are
// none. It never panics and runs in time linear in len(text). A secret found
// only decoded (\u0041KIA…, a zero-width split) spans its bytes as written.
func Scan(text []byte) []Finding {
	build()
	hits := scanHits(text, nil)
	hits = scanDecoded(text, hits)
	if len(hits) == 0 {
		return nil
	}
	hits = resolveOverlaps(hits)
	return locate(text, hits)
}

// scanHits runs every rule over text and appends the raw matches to hits.
func scanHits(text []byte, hits []hit) []hit {
	var gl []glPos
	keywords.each(text, func(w, start int) {
		e := &keywordRules[w]
		if e.rule.gl != nil {
			gl = append(gl, glPos{rule: e.rule.glIx, start: start, end: start + len(e.kw)})
			return
		}
		if h, ok := e.rule.match(text, start, e); ok {
			hits = append(hits, h)
		}
	})
	return matchGitleaks(text, gl, hits)
}

// ScanString is Scan over a string.
func ScanString(s string) []Finding { return Scan([]byte(s)) }

// hit is a raw match; show, when set, replaces the redacted secret (a PEM
// header stays readable).
type hit struct {
	rule       *rule
	start, end int
	show       string
}

// resolveOverlaps sorts hits and drops any overlapping an earlier kept one;
// at one start a specific rule beats the generic assignment rule.
func resolveOverlaps(hits []hit) []hit {
	sort.SliceStable(hits, func(i, j int) bool {
		a, b := hits[i], hits[j]
		if a.start != b.start {
			return a.start < b.start
		}
		if a.rule.generic != b.rule.generic {
			return !a.rule.generic
		}
		if a.end != b.end {
			return a.end > b.end
		}
		return a.rule.order < b.rule.order
	})
	kept := hits[:0]
	lastEnd := -1
	for _, h := range hits {
		if h.start < lastEnd {
			continue
		}
		kept = append(kept, h)
		lastEnd = h.end
	}
	return kept
}

// locate turns sorted hits into findings, dropping those on pragma lines, in
// one walk of the text.
func locate(text []byte, hits []hit) []Finding {
	out := make([]Finding, 0, len(hits))
	line, lineStart, pos := 1, 0, 0
	allowed, checked := false, -1 // pragma verdict for the line starting at checked
	for _, h := range hits {
		seg := text[pos:h.start]
		if n := bytes.Count(seg, nl); n > 0 {
			line += n
			lineStart = pos + bytes.LastIndexByte(seg, '\n') + 1
		}
		pos = h.start
		if checked != lineStart {
			lineEnd := bytes.IndexByte(text[lineStart:], '\n')
			if lineEnd < 0 {
				lineEnd = len(text)
			} else {
				lineEnd += lineStart
			}
			allowed, checked = bytes.Contains(text[lineStart:lineEnd], pragma), lineStart
		}
		if allowed {
			continue
		}
		red := h.show
		if red == "" {
			red = Redact(string(text[h.start:h.end]))
		}
		out = append(out, Finding{
			Rule:        h.rule.id,
			Description: h.rule.desc,
			Offset:      h.start,
			Length:      h.end - h.start,
			Line:        line,
			Column:      h.start - lineStart + 1,
			Redacted:    red,
		})
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

var (
	nl     = []byte{'\n'}
	pragma = []byte(AllowPragma)
)

// maxStars caps the mask so a long secret (a PEM body) renders short.
const maxStars = 16

// Redact masks a secret for display (AKIA************MPLE): it keeps at most
// 4 runes, and a fifth of the secret, at each end, and masks the rest with
// as many stars, at most 16.
func Redact(secret string) string {
	n := utf8.RuneCountInString(secret)
	keep := min(n/5, 4)
	stars := min(n-2*keep, maxStars)
	runes := []rune(secret)
	return string(runes[:keep]) + strings.Repeat("*", stars) + string(runes[n-keep:])
}

// entropy is the Shannon entropy of s in bits per byte.
func entropy(s []byte) float64 {
	if len(s) == 0 {
		return 0
	}
	var counts [256]int
	for _, c := range s {
		counts[c]++
	}
	n := float64(len(s))
	var h float64
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}
