package host

import (
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// The deterministic extractors of a brief: regular expressions over cited
// text, nothing learned. Each source is scanned up to maxScanBytes.
const (
	maxScanBytes       = 16 << 10
	maxEntitiesPerKind = 10
	maxCues            = 10
	maxCueRunes        = 200
)

// sourceText is text with the id it came from.
type sourceText struct {
	id   string
	text string
}

var (
	urlRe     = regexp.MustCompile(`https?://[^\s<>"'` + "`" + `)\]]+`)
	backtick  = regexp.MustCompile("`([^`\n]{2,120})`")
	commandRe = regexp.MustCompile(`(?m)(?:^\$ |\b)((?:go|git|make|palace|npm|npx|yarn|cargo|docker|kubectl|pip|python3?|sqlite3|opa)\s+[a-z][\w-]*(?:\s+(?:--?[\w-]+(?:=\S+)?|\.{0,2}/[\w./-]*|[\w./-]+\.\.\.))+)`)
	pathRe    = regexp.MustCompile(`(?:^|[\s(\["'])((?:\.{0,2}/)?(?:[\w.-]+/)+[\w.*-]+|[\w-]+\.(?:go|rs|py|ts|tsx|js|jsx|md|json|ya?ml|toml|sql|rego|sh|c|h|cc|cpp|java|rb|wasm|jsonl|db))\b`)
	// identRe: CamelCase, snake_case, CONST_CASE, pkg.Func().
	identRe     = regexp.MustCompile(`\b(?:[a-zA-Z_]\w*(?:\.[a-zA-Z_]\w*)+\(\)|(?:[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+|[a-z][a-z0-9]*(?:_[a-z0-9]+)+|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\b)`)
	cueRe       = regexp.MustCompile(`(?i)\b(TODO|FIXME|XXX|blockers?|blocked|remaining|not yet|still fails?|open question|pending|unresolved|follow[- ]up)\b`)
	conflictCue = regexp.MustCompile(`(?i)\b(contradict\w*|does(?:n't| not) work|wrong|regress\w*|revert\w*|broke|flaky|fails?|failed)\b`)
)

type entityAcc struct {
	kind, text string
	count      int
	sources    []string
	first      int
}

// extractEntities finds commands, paths, URLs and identifiers, ordered by
// kind, then count (most first), then text.
func extractEntities(texts []sourceText) []BriefEntity {
	acc := map[string]*entityAcc{}
	n := 0
	add := func(kind, text, src string) {
		if !strings.HasSuffix(text, "...") {
			text = strings.TrimRight(text, ".,;:")
		}
		if len(text) < 2 {
			return
		}
		k := kind + "\x00" + text
		e, ok := acc[k]
		if !ok {
			e = &entityAcc{kind: kind, text: text, first: n}
			acc[k] = e
			n++
		}
		e.count++
		e.sources = appendNew(e.sources, src)
	}
	for _, st := range texts {
		s := st.text
		if len(s) > maxScanBytes {
			s = s[:maxScanBytes]
		}
		for _, u := range urlRe.FindAllString(s, -1) {
			add("url", u, st.id)
		}
		s = urlRe.ReplaceAllString(s, " ")
		claimed := map[string]bool{}
		for _, m := range backtick.FindAllStringSubmatch(s, -1) {
			kind := "identifier"
			if strings.Contains(m[1], " ") {
				kind = "command"
			}
			add(kind, m[1], st.id)
			claimed[m[1]] = true
		}
		s = backtick.ReplaceAllString(s, " ")
		for _, m := range commandRe.FindAllStringSubmatch(s, -1) {
			if !claimed[m[1]] {
				add("command", m[1], st.id)
			}
		}
		s = commandRe.ReplaceAllString(s, " ")
		for _, m := range pathRe.FindAllStringSubmatch(s, -1) {
			if !claimed[m[1]] && strings.IndexFunc(m[1], unicode.IsLetter) >= 0 {
				add("path", m[1], st.id)
			}
		}
		for _, m := range identRe.FindAllString(s, -1) {
			if !claimed[m] {
				add("identifier", m, st.id)
			}
		}
	}
	kinds := map[string]int{"command": 0, "path": 1, "url": 2, "identifier": 3}
	all := make([]*entityAcc, 0, len(acc))
	for _, e := range acc {
		all = append(all, e)
	}
	sort.Slice(all, func(i, j int) bool {
		x, y := all[i], all[j]
		if kinds[x.kind] != kinds[y.kind] {
			return kinds[x.kind] < kinds[y.kind]
		}
		if x.count != y.count {
			return x.count > y.count
		}
		return x.text < y.text
	})
	out := []BriefEntity{}
	per := map[string]int{}
	for _, e := range all {
		if per[e.kind] == maxEntitiesPerKind {
			continue
		}
		per[e.kind]++
		out = append(out, BriefEntity{Kind: e.kind, Text: e.text, Count: e.count, Sources: e.sources})
	}
	return out
}

// extractCues finds lines with unresolved-work cues (TODO, blocker,
// remaining, …), first occurrence of each line, in source order.
func extractCues(texts []sourceText) []BriefCue {
	out := []BriefCue{}
	seen := map[string]bool{}
	for _, st := range texts {
		s := st.text
		if len(s) > maxScanBytes {
			s = s[:maxScanBytes]
		}
		for _, line := range strings.Split(s, "\n") {
			m := cueRe.FindString(line)
			if m == "" {
				continue
			}
			text, cut := excerpt(line, maxCueRunes)
			if seen[text] {
				continue
			}
			seen[text] = true
			out = append(out, BriefCue{Cue: strings.ToLower(m), Text: text, Source: st.id, Truncated: cut})
			if len(out) == maxCues {
				return out
			}
		}
	}
	return out
}
