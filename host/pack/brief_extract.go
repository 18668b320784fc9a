package pack

import (
	"cmp"
	"slices"
	"strings"
	"unicode"

	"github.com/palacehq/palace/internal/cache"
	"github.com/palacehq/palace/internal/lazyregexp"
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
	urlRe     = lazyregexp.New(`https?://[^\s<>"'` + "`" + `)\]]+`)
	backtick  = lazyregexp.New("`([^`\n]{2,120})`")
	commandRe = lazyregexp.New(`(?m)(?:^\$ |\b)((?:go|git|make|palace|npm|npx|yarn|cargo|docker|kubectl|pip|python3?|sqlite3|opa)\s+[a-z][\w-]*(?:\s+(?:--?[\w-]+(?:=\S+)?|\.{0,2}/[\w./-]*|[\w./-]+\.\.\.))+)`)
	pathRe    = lazyregexp.New(`(?:^|[\s(\["'])((?:\.{0,2}/)?(?:[\w.-]+/)+[\w.*-]+|[\w-]+\.(?:go|rs|py|ts|tsx|js|jsx|md|json|ya?ml|toml|sql|rego|sh|c|h|cc|cpp|java|rb|wasm|jsonl|db))\b`)
	// identRe: CamelCase, snake_case, CONST_CASE, pkg.Func().
	identRe     = lazyregexp.New(`\b(?:[a-zA-Z_]\w*(?:\.[a-zA-Z_]\w*)+\(\)|(?:[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+|[a-z][a-z0-9]*(?:_[a-z0-9]+)+|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\b)`)
	cueRe       = lazyregexp.New(`(?i)\b(TODO|FIXME|XXX|blockers?|blocked|remaining|not yet|still fails?|open question|pending|unresolved|follow[- ]up)\b`)
	conflictCue = lazyregexp.New(`(?i)\b(contradict\w*|does(?:n't| not) work|wrong|regress\w*|revert\w*|broke|flaky|fails?|failed)\b`)
)

type entityAcc struct {
	kind, text string
	count      int
	sources    []string
}

// entities finds commands, paths, URLs and identifiers, ordered by kind,
// then count (most first), then text. With prefilter a regexp runs on a
// text only when a cheap scan finds what every one of its matches needs;
// FuzzExtractPrefilters holds both ways to the same answer.
func entities(texts []sourceText, prefilter bool) []BriefEntity {
	acc := map[string]*entityAcc{}
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
			e = &entityAcc{kind: kind, text: text}
			acc[k] = e
		}
		e.count++
		e.sources = appendNew(e.sources, src)
	}
	for _, st := range texts {
		s := st.text
		if len(s) > maxScanBytes {
			s = s[:maxScanBytes]
		}
		may := func(cheap func(string) bool) bool { return !prefilter || cheap(s) }
		if may(mayHaveURL) {
			if us := urlRe.FindAllString(s, -1); len(us) > 0 {
				for _, u := range us {
					add("url", u, st.id)
				}
				s = urlRe.ReplaceAllString(s, " ")
			}
		}
		claimed := map[string]bool{}
		if may(mayHaveBacktick) {
			if ms := backtick.FindAllStringSubmatch(s, -1); len(ms) > 0 {
				for _, m := range ms {
					kind := "identifier"
					if strings.Contains(m[1], " ") {
						kind = "command"
					}
					add(kind, m[1], st.id)
					claimed[m[1]] = true
				}
				s = backtick.ReplaceAllString(s, " ")
			}
		}
		if may(mayHaveCommand) {
			if ms := commandRe.FindAllStringSubmatch(s, -1); len(ms) > 0 {
				for _, m := range ms {
					if !claimed[m[1]] {
						add("command", m[1], st.id)
					}
				}
				s = commandRe.ReplaceAllString(s, " ")
			}
		}
		if may(mayHavePath) {
			for _, m := range pathRe.FindAllStringSubmatch(s, -1) {
				if !claimed[m[1]] && strings.IndexFunc(m[1], unicode.IsLetter) >= 0 {
					add("path", m[1], st.id)
				}
			}
		}
		if may(mayHaveIdent) {
			for _, m := range identRe.FindAllString(s, -1) {
				if !claimed[m] {
					add("identifier", m, st.id)
				}
			}
		}
	}
	kinds := map[string]int{"command": 0, "path": 1, "url": 2, "identifier": 3}
	all := make([]*entityAcc, 0, len(acc))
	for _, e := range acc {
		all = append(all, e)
	}
	slices.SortFunc(all, func(x, y *entityAcc) int {
		return cmp.Or(cmp.Compare(kinds[x.kind], kinds[y.kind]), cmp.Compare(y.count, x.count), strings.Compare(x.text, y.text))
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

// cues finds lines with unresolved-work cues (TODO, blocker, remaining, …),
// first occurrence of each line, in source order. With prefilter a text is
// split into lines only when it may hold a cue (mayHaveCue), and its cue
// lines are remembered (cueMemo): briefs quote the same evidence again.
func cues(texts []sourceText, prefilter bool) []BriefCue {
	out := []BriefCue{}
	seen := map[string]bool{}
	for _, st := range texts {
		s := st.text
		if len(s) > maxScanBytes {
			s = s[:maxScanBytes]
		}
		var lines []cueLine
		if prefilter {
			lines = cueMemo.Of(cache.Forever{}, s, func(s string) []cueLine {
				if !mayHaveCue(s) {
					return nil
				}
				return cueLines(s)
			})
		} else {
			lines = cueLines(s)
		}
		for _, l := range lines {
			if seen[l.text] {
				continue
			}
			seen[l.text] = true
			out = append(out, BriefCue{Cue: l.cue, Text: l.text, Source: st.id, Truncated: l.cut})
			if len(out) == maxCues {
				return out
			}
		}
	}
	return out
}

// cueLine is a line of a text with a cue, as a brief quotes it.
type cueLine struct {
	cue, text string
	cut       bool
}

// cueLines returns the distinct cue lines of s, in order.
func cueLines(s string) []cueLine {
	var out []cueLine
	seen := map[string]bool{}
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
		out = append(out, cueLine{strings.ToLower(m), text, cut})
	}
	return out
}

func textBytes[V any](s string, _ V) int { return len(s) }

// cueMemo and conflictMemo remember per text, bounded by count and bytes.
var (
	cueMemo      = cache.Memo[string, []cueLine]{Max: 1 << 13, Cost: textBytes[[]cueLine], MaxCost: 8 << 20}
	conflictMemo = cache.Memo[string, bool]{Max: 1 << 13, Cost: textBytes[bool], MaxCost: 8 << 20}
)

// The prefilters: each is true for every text its regexp can match (and
// for some it cannot), so skipping a text they reject changes nothing.

func mayHaveURL(s string) bool      { return strings.Contains(s, "http") }
func mayHaveBacktick(s string) bool { return strings.IndexByte(s, '`') >= 0 }

// commandWords are commandRe's words; a command is one followed by \s.
var commandWords = []string{"go", "git", "make", "palace", "npm", "npx", "yarn", "cargo", "docker", "kubectl", "pip", "python", "sqlite3", "opa"}

func mayHaveCommand(s string) bool {
	// A command has an argument that is a flag, a path or ends in "...":
	// whitespace then '-', '.' or '/', or "..." somewhere.
	arg := strings.Contains(s, "...")
	for i := 0; !arg && i+1 < len(s); i++ {
		arg = isSpaceRE(s[i]) && (s[i+1] == '-' || s[i+1] == '.' || s[i+1] == '/')
	}
	if !arg {
		return false
	}
	for _, w := range commandWords {
		for i := 0; ; {
			j := strings.Index(s[i:], w)
			if j < 0 {
				break
			}
			i += j + len(w)
			// python3? : the word may end with a 3.
			if i < len(s) && w == "python" && s[i] == '3' {
				i++
			}
			if i < len(s) && isSpaceRE(s[i]) {
				return true
			}
		}
	}
	return false
}

// isSpaceRE is RE2's \s: [\t\n\f\r ].
func isSpaceRE(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

// pathExts are pathRe's file extensions; a path has a "/" or one of them
// after a dot.
var pathExts = []string{"go", "rs", "py", "ts", "js", "md", "json", "yaml", "yml", "toml", "sql", "rego", "sh", "c", "h", "java", "rb", "wasm", "db"}

func mayHavePath(s string) bool {
	if strings.IndexByte(s, '/') >= 0 {
		return true
	}
	for i := 0; ; {
		j := strings.IndexByte(s[i:], '.')
		if j < 0 {
			return false
		}
		i += j + 1
		for _, e := range pathExts {
			if strings.HasPrefix(s[i:], e) {
				return true
			}
		}
	}
}

// mayHaveIdent: pkg.Func() needs "()", snake_case and CONST_CASE "_",
// CamelCase an upper-case letter, lower-case letters or digits, another.
func mayHaveIdent(s string) bool {
	if strings.Contains(s, "()") || strings.IndexByte(s, '_') >= 0 {
		return true
	}
	state := 0 // 1: after [A-Z]; 2: after [A-Z][a-z0-9]+
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z':
			if state == 2 {
				return true
			}
			state = 1
		case 'a' <= c && c <= 'z' || '0' <= c && c <= '9':
			if state >= 1 {
				state = 2
			}
		default:
			state = 0
		}
	}
	return false
}

// cueWords are cueRe's alternatives, lower-cased, up to their first
// optional part; a text that is not ASCII is always scanned (RE2 folds K, ſ).
var cueWords = []string{"todo", "fixme", "xxx", "blocker", "blocked", "remaining", "not yet", "still fail", "open question", "pending", "unresolved", "follow"}

func mayHaveCue(s string) bool { return mayHaveFolded(s, cueWords) }

// conflictWords are conflictCue's alternatives, as cueWords are cueRe's.
var conflictWords = []string{"contradict", "doesn't work", "does not work", "wrong", "regress", "revert", "broke", "flaky", "fail"}

// hasConflictCue is conflictCue.MatchString behind its prefilter,
// remembered per text.
func hasConflictCue(s string) bool {
	return conflictMemo.Of(cache.Forever{}, s, func(s string) bool {
		return mayHaveFolded(s, conflictWords) && conflictCue.MatchString(s)
	})
}

// mayHaveFolded reports whether s, lower-cased, holds one of the lower-case
// ASCII words, or is not ASCII (where case folding reaches beyond ASCII).
func mayHaveFolded(s string, words []string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return true
		}
	}
	low := strings.ToLower(s) // copies only when s has upper-case letters
	for _, w := range words {
		if strings.Contains(low, w) {
			return true
		}
	}
	return false
}
