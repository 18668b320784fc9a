package policies

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gobwas/glob"

	"github.com/palacehq/palace/internal/cache"
)

// defaultScope is default/scope.rego in Go, also the fallback when a team's
// scope policy fails. TestNativeMatchesRego holds the two identical.
func defaultScope(in ScopeInput) ScopeOutput {
	x := in.Context
	req := scopeRequest{file: x.File, language: strings.ToLower(x.Language), field: x.Field, wake: x.Wake}
	out := make(ScopeOutput, len(in.Cards))
	for _, c := range in.Cards {
		out[c.ID] = req.result(c, x)
	}
	return out
}

// The points of default/scope.rego; its header says why they are these.
const (
	unscopedFit     = 10
	pathFit         = 20
	languageFit     = 4
	fieldFit        = 6
	pathCouldApply  = 5
	otherCouldApply = 3
	maxScopeFit     = 30
	relevanceOpFit  = 12
	triggerFit      = 8
	maxOpFit        = 20
	// globalFit is an unscoped card's location at the global anchor: a card
	// written for every repository fits any one of them less closely.
	globalFit = 2
	// otherActivity is what a card costs whose trigger intents the
	// request's intents all miss.
	otherActivity = 10
	// textAgrees is the relevance from which an intent or tool hit earns
	// the whole operation fit.
	textAgrees = 0.2
	// relevantToRequest is the relevance from which a path scope the file
	// misses no longer excludes a card.
	relevantToRequest = 0.5
)

type scopeRequest struct {
	file, language, field string
	// wake: the request names no task, so "could apply" earns nothing.
	wake bool
}

// couldApply is what a scope the request names nothing of earns: pts, or
// nothing in a wake-up request, with the why line of either.
func (r scopeRequest) couldApply(pts int, kind, scopes, nothing string) (int, string) {
	if r.wake {
		return 0, fmt.Sprintf("%s-scoped to %s; no task is named, so it earns no place", kind, scopes)
	}
	return pts, fmt.Sprintf("%s-scoped to %s; the request names no %s, so it could apply", kind, scopes, nothing)
}

func (r scopeRequest) result(c ScopeCard, x ScopeContext) ScopeResult {
	var (
		located, fieldPts int
		miss              bool
		hits              int
		why               []string
	)
	sc := c.Scope
	// path: `**` crosses directories, `*` does not; the first matching glob
	// in the card's order is named.
	if len(sc.Paths) > 0 {
		all := strings.Join(sc.Paths, ", ")
		switch hit, ok := firstGlob(sc.Paths, r.file); {
		case r.file == "":
			pts, line := r.couldApply(pathCouldApply, "path", all, "file")
			located += pts
			why = append(why, line)
		case ok:
			located += pathFit
			hits++
			why = append(why, fmt.Sprintf("path %s matches %s", r.file, hit))
		case c.Relevance >= relevantToRequest:
			why = append(why, fmt.Sprintf("path %s matches none of %s, but the request is about the card", r.file, all))
		default:
			miss = true
			why = append(why, fmt.Sprintf("path %s matches none of %s", r.file, all))
		}
	}
	if len(sc.Languages) > 0 {
		all := strings.Join(sc.Languages, ", ")
		switch {
		case r.language == "":
			pts, line := r.couldApply(otherCouldApply, "language", all, "language")
			located += pts
			why = append(why, line)
		case slices.ContainsFunc(sc.Languages, func(l string) bool { return strings.ToLower(l) == r.language }):
			located += languageFit
			hits++
			why = append(why, fmt.Sprintf("language %s is one of %s", r.language, all))
		default:
			miss = true
			why = append(why, fmt.Sprintf("language %s is not one of %s", r.language, all))
		}
	}
	switch all := strings.Join(sc.Fields, ", "); {
	case len(sc.Fields) == 0 && r.field == "":
	case r.field == "":
		var line string
		fieldPts, line = r.couldApply(otherCouldApply, "field", all, "field")
		why = append(why, line)
	case len(sc.Fields) == 0 && c.Field == r.field:
		// The card's own field is a bonus, not a scope: it confirms nothing.
		fieldPts = fieldFit
		why = append(why, fmt.Sprintf("card field %s matches the request", r.field))
	case len(sc.Fields) == 0:
	case slices.Contains(sc.Fields, r.field):
		fieldPts = fieldFit
		hits++
		why = append(why, fmt.Sprintf("field %s is one of the scope fields %s", r.field, all))
	default:
		miss = true
		why = append(why, fmt.Sprintf("field %s is not one of the scope fields %s", r.field, all))
	}
	// An unscoped card, or a scoped one the request confirmed, gets its
	// anchor's base.
	base := unscopedFit
	if c.Anchor == "global" {
		base = globalFit
	}
	switch {
	case len(sc.Paths)+len(sc.Languages)+len(sc.Fields) == 0:
		located = base
		why = append(why, "unscoped: applies everywhere at its anchor")
	case hits > 0 && !miss && located < base:
		located = base
		why = append(why, "the request matches its scope, so it ranks no lower than an unscoped card")
	}
	hitIntents := intersect(c.Trigger.Intents, x.Intents)
	hitTools := intersect(c.Trigger.ToolNeeds, x.Tools)
	for _, i := range hitIntents {
		why = append(why, fmt.Sprintf("intent %s is one of the card's trigger intents", i))
	}
	for _, t := range hitTools {
		why = append(why, fmt.Sprintf("tool %s is one of the card's tool needs", t))
	}
	// Operation fit: relevance, then the activity. A hit adds triggerFit,
	// or the whole fit when the text agrees; another activity costs.
	op := relPoints(c.Relevance, relevanceOpFit)
	hitCount := len(hitIntents) + len(hitTools)
	cardIntents := distinctSorted(c.Trigger.Intents)
	switch {
	case hitCount > 0 && c.Relevance >= textAgrees:
		op = maxOpFit
	case hitCount > 0:
		op = min(maxOpFit, op+triggerFit*hitCount)
	case len(x.Intents) > 0 && len(cardIntents) > 0:
		op -= otherActivity
		why = append(why, fmt.Sprintf("the request's intents (%s) are none of the card's trigger intents (%s)",
			strings.Join(distinctSorted(x.Intents), ", "), strings.Join(cardIntents, ", ")))
	}
	return ScopeResult{
		Applies:      !miss,
		ScopeFit:     min(maxScopeFit, located+fieldPts),
		OperationFit: op,
		Why:          why,
	}
}

// distinctSorted is the sorted set of xs, as Rego's sort({x | some x in xs}).
func distinctSorted(xs []string) []string {
	out := slices.Clone(xs)
	slices.Sort(out)
	return slices.Compact(out)
}

// intersect is the sorted, distinct members of have that are also in want,
// as Rego's sort({x | some x in have; x in want}) gives.
func intersect(have, want []string) []string {
	var out []string
	for _, h := range have {
		if slices.Contains(want, h) && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	slices.Sort(out)
	return out
}

// firstGlob returns the first pattern matching file as OPA's
// glob.match(gitglob(pattern), ["/"], file) does; a pattern that does not
// compile matches nothing.
func firstGlob(patterns []string, file string) (string, bool) {
	for _, p := range patterns {
		if g := compiledGlob(gitGlob(p)); g != nil && g.Match(file) {
			return p, true
		}
	}
	return "", false
}

// globs holds compiled patterns (nil: the pattern does not compile); a
// long-running host sees the same card scopes on every request. Bounded,
// so hostile inputs cannot grow it without bound.
var globs = cache.Memo[string, *glob.Pattern]{Max: 4096}

func compiledGlob(p string) *glob.Pattern {
	return globs.Of(cache.Forever{}, p, func(p string) *glob.Pattern {
		g, err := glob.Compile(p, '/')
		if err != nil {
			return nil
		}
		return g
	})
}

// gitGlob gives a pattern gitignore's meaning of `**/` (zero or more
// directories) by rewriting each to `{**/,}`, as gitglob(p) of
// default/scope.rego does.
func gitGlob(p string) string {
	p = strings.ReplaceAll(p, "/**/", "/{**/,}")
	if strings.HasPrefix(p, "**/") {
		p = "{**/,}" + p[len("**/"):]
	}
	return p
}
