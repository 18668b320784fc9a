// Package secrets is palace's one secret scanner: a curated rule set that
// finds credentials in text before it is stored or committed.
//
// It is used by `palace mailbox file` (a letter with a secret is refused),
// `palace mailbox check` (finding PM003) and the promotion floor (a card whose
// statement or content trips the scanner cannot become authoritative). It owns
// the rules, the redaction of what it found and the allow pragma; it is pure
// over bytes and must not touch the filesystem, the store or any policy.
//
// # Rules
//
// palace's own rules recognise provider tokens by their fixed prefixes (AWS
// key ids, GitHub, GitLab, Slack, Stripe, Google API keys), private key
// blocks by their PEM header, JSON Web Tokens by their decoded header, and
// anything else only when a high-entropy value is assigned to a name that
// says it is a secret (password, secret, token, api_key, …). Around them,
// some two hundred community rules (OpenAI, Anthropic, Hugging Face, npm,
// PyPI, Twilio, SendGrid, …) are generated from gitleaks' default
// configuration at a pinned version (gitleaks_rules.go, `go generate`; MIT,
// see NOTICE), with their keywords, entropy thresholds and allowlists. Where
// both find the same secret, palace's rule reports it. See [Rules].
//
// # Decoding
//
// Every line with a backslash or a non-ASCII byte is also read decoded: JSON
// escapes resolved and invisible format characters (zero-width, BOM, bidi
// controls) dropped, so \u0041KIA… or a key split by U+200B is still found.
//
// # Speed
//
// One pass of a keyword automaton (like gitleaks' keywords) finds the few
// places where a rule can match; rules then look only at a bounded window
// around each keyword (a community rule's regex runs once per line its
// keywords occur on), so the cost is linear in the text.
//
// # Notes
//
//   - A line that contains [AllowPragma] is exempt, for deliberate test
//     fixtures. For a multi-line match (a PEM block) the line where the match
//     starts decides.
//   - Lines and columns are 1-based; columns count bytes, not runes or UTF-16
//     units (as Go's go/token does). Lines end at '\n'; a '\r' before it is
//     part of the line.
//   - The scanner never returns the secret itself, only a redacted form.
package secrets

import (
	"bytes"
	"math"
	"sort"
	"strings"
	"unicode/utf8"
)

// AllowPragma exempts the line it appears on from scanning, for a deliberate
// fixture such as a test key.
const AllowPragma = "palace:allow-secret"

// Finding is one secret found in a text.
type Finding struct {
	// Rule is the stable id of the rule that matched, e.g. "aws-access-key-id".
	Rule string `json:"rule"`
	// Description says in words what was found.
	Description string `json:"description"`
	// Offset is the byte offset of the secret in the scanned text.
	Offset int `json:"offset"`
	// Length is the secret's length in bytes.
	Length int `json:"length"`
	// Line is the 1-based line of Offset.
	Line int `json:"line"`
	// Column is the 1-based byte column of Offset within Line.
	Column int `json:"column"`
	// Redacted is the secret with all but a short prefix and suffix masked,
	// safe to print: AKIA************MPLE.
	Redacted string `json:"redacted"`
}

// Rule describes one rule of the scanner.
type Rule struct {
	// ID is stable across releases; tools and docs may key on it.
	ID string `json:"id"`
	// Description says what the rule finds.
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
// none. It never panics and runs in time linear in len(text).
//
// Besides the text as it is, Scan reads each line that holds escapes or
// invisible characters a second time, decoded (see [decodeLine]), so a key
// written as \u0041KIA… in a JSON string or split by a zero-width space is
// still found; such a finding spans the secret as written in text.
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

// hit is a raw match before line/column and pragma handling. start/end span
// the secret itself; show, when set, replaces the redacted secret (used to
// keep a PEM header readable).
type hit struct {
	rule       *rule
	start, end int
	show       string
}

// resolveOverlaps sorts hits and drops any hit that overlaps an earlier kept
// one, preferring specific rules over the generic assignment rule at the
// same start so a JWT assigned to `token =` is reported once, as a JWT.
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

// locate turns sorted hits into findings with lines and columns, dropping
// hits on lines that carry the allow pragma. It walks the text once, so many
// hits on one long line stay linear.
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
			// Once per line, not per hit: a 10 MB line with many hits
			// must not be searched once for each.
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

// Redact masks a secret for display: a 20-character AWS key id becomes
// AKIA************MPLE. It keeps at most 4 runes at each end and never more
// than a fifth of the secret on either side; secrets under 5 runes are fully
// masked. The mask is as long as what it hides, capped at 16 stars.
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
