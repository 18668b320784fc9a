// Package staleness keeps cards true to the code they cite: evidence citing
// a repository file records what it saw (Observe), and a Checker looks again
// when a card is served, following moved lines and renamed files. Files are
// opened without following links, never read past MaxFileBytes, and read
// once per change. It writes nothing and must not import host or pack.

package staleness

import (
	"path"
	"strconv"
	"strings"
	"unicode"

	"github.com/palacehq/palace/domain"
)

// Ref is a citation of code as a source_ref names it.
type Ref struct {
	// Path is the file as written (relative, or absolute inside the
	// repository), slash-separated.
	Path string
	Kind domain.ObservationKind
	// Start and End are the cited lines, 1-based and inclusive (Lines).
	Start, End int
	// Symbol is the cited name (Symbol).
	Symbol string
}

// String renders the reference the way palace writes source refs:
// path#L3-L5, path#L3, path#Name or path.
func (r Ref) String() string {
	switch r.Kind {
	case domain.ObservedLines:
		if r.Start == r.End {
			return r.Path + "#L" + strconv.Itoa(r.Start)
		}
		return r.Path + "#L" + strconv.Itoa(r.Start) + "-L" + strconv.Itoa(r.End)
	case domain.ObservedSymbol:
		return r.Path + "#" + r.Symbol
	}
	return r.Path
}

// RefOf is the reference an observation keeps.
func RefOf(o domain.Observation) Ref {
	return Ref{Path: o.Path, Kind: o.Kind, Start: o.LineStart, End: o.LineEnd, Symbol: o.Symbol}
}

// ParseRef reads a source_ref as a citation of code: `path#L10-L24`,
// `path#L10-24`, `path#L10`, `path:10-24`, `path:10` (lines), `path#Name`
// (a symbol) or `path` (the file); false for what names no repository file
// (a URL or other scheme, `../x`, text with spaces or control characters).
func ParseRef(ref string) (Ref, bool) {
	ref = strings.TrimSpace(ref)
	if ref == "" || len(ref) > 4096 || strings.Contains(ref, "://") {
		return Ref{}, false
	}
	for _, r := range ref {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return Ref{}, false
		}
	}
	r := Ref{Kind: domain.ObservedFile, Path: ref}
	if p, frag, ok := strings.Cut(ref, "#"); ok {
		r.Path = p
		if s, e, ok := lineRange(frag, "L"); ok {
			r.Kind, r.Start, r.End = domain.ObservedLines, s, e
		} else if isSymbol(frag) && !looksLikeLines(frag) {
			r.Kind, r.Symbol = domain.ObservedSymbol, frag
		} else {
			return Ref{}, false
		}
	} else if i := strings.LastIndexByte(ref, ':'); i > 0 {
		if s, e, ok := lineRange(ref[i+1:], ""); ok {
			r.Path, r.Kind, r.Start, r.End = ref[:i], domain.ObservedLines, s, e
		} else {
			// A colon that does not end in line numbers: a scheme
			// ("mailto:x") or a note, not a path palace can check.
			return Ref{}, false
		}
	}
	if r.Path == "" || strings.HasSuffix(r.Path, "/") {
		return Ref{}, false
	}
	if !strings.HasPrefix(r.Path, "/") {
		c := path.Clean(r.Path)
		if c == "." || c == ".." || strings.HasPrefix(c, "../") {
			return Ref{}, false
		}
		r.Path = c
	}
	return r, true
}

// lineRange reads "L10-L24", "L10-24" or "L10" (prefix "L"), or "10-24"
// and "10" (prefix "").
func lineRange(s, prefix string) (start, end int, ok bool) {
	a, b, isRange := strings.Cut(s, "-")
	num := func(x string, p string) (int, bool) {
		x, found := strings.CutPrefix(x, p)
		if p != "" && !found {
			return 0, false
		}
		if x == "" || len(x) > 9 {
			return 0, false
		}
		n, err := strconv.Atoi(x)
		return n, err == nil && n > 0
	}
	if start, ok = num(a, prefix); !ok {
		return 0, 0, false
	}
	if !isRange {
		return start, start, true
	}
	if prefix != "" && !strings.HasPrefix(b, prefix) {
		prefix = ""
	}
	if end, ok = num(b, prefix); !ok || end < start {
		return 0, 0, false
	}
	return start, end, true
}

// looksLikeLines says a fragment meant lines (L0, L12x) even though it
// names none palace reads: it is not taken for a symbol.
func looksLikeLines(s string) bool {
	return len(s) > 1 && s[0] == 'L' && s[1] >= '0' && s[1] <= '9'
}

// isSymbol accepts an identifier, or dotted identifiers (Store.Open).
func isSymbol(s string) bool {
	if s == "" || len(s) > 200 {
		return false
	}
	for _, part := range strings.Split(s, ".") {
		if part == "" {
			return false
		}
		for i, r := range part {
			if !(r == '_' || unicode.IsLetter(r) || (i > 0 && unicode.IsDigit(r))) {
				return false
			}
		}
	}
	return true
}
