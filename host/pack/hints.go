package pack

import (
	"context"
	"slices"
	"strings"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/cardview"
	"github.com/palacehq/palace/policies"
)

// HintsRequest asks which cards' triggers match a document.
type HintsRequest struct {
	// File is the document's path (absolute, or relative to the host's
	// directory); the scope policy sees it worktree-relative.
	File string `json:"file"`
	Text string `json:"-"`
	// Language is an editor language id; defaults to one derived from File.
	Language string `json:"language,omitempty"`
	// Cache, when not nil, keeps line matches between calls for the same
	// document (an editor's buffer as it is edited).
	Cache *MatchCache `json:"-"`
}

// Hints is the answer to a HintsRequest.
type Hints struct {
	File    string         `json:"file"`
	Matches []TriggerMatch `json:"matches"`
	// Truncated says MaxTriggerMatches cut the list.
	Truncated bool `json:"truncated,omitempty"`
	// OutOfScope counts matches dropped because the card's scope does not
	// cover this file.
	OutOfScope int `json:"out_of_scope"`
	// Invalid lists stored patterns that did not compile.
	Invalid []InvalidTrigger  `json:"invalid,omitempty"`
	Policy  policies.Decision `json:"policy"`
}

// Hints matches the trigger patterns of set (compiled fresh when nil)
// against req.Text and keeps the matches whose card applies to req.File by
// the scope policy: `palace hints` and the LSP's inlay hints and trigger
// diagnostics. Policy failures fall back to the embedded defaults.
func (pl *Pipeline) Hints(ctx context.Context, set *TriggerSet, req HintsRequest) (Hints, error) {
	set, file, lang, err := pl.hintsInput(ctx, set, req)
	if err != nil {
		return Hints{}, err
	}
	res := Hints{File: file, Invalid: set.invalid, Matches: []TriggerMatch{}}
	matches, truncated := set.MatchCached(req.Text, req.Cache)
	res.Truncated = truncated
	if len(matches) == 0 {
		return res, nil
	}
	cards := make([]TriggerCard, len(matches))
	for i, m := range matches {
		cards[i] = m.Card
	}
	applies, d, err := pl.cardsApply(ctx, file, lang, cards)
	if err != nil {
		return Hints{}, err
	}
	res.Policy = d
	var ids []string
	var cardsIn []TriggerCard
	for _, m := range matches {
		if applies[m.Card.ID] {
			res.Matches = append(res.Matches, m)
			ids = append(ids, m.Card.ID)
			cardsIn = append(cardsIn, m.Card)
		} else {
			res.OutOfScope++
		}
	}
	res.Matches = oneOfEachStatement(res.Matches)
	if len(ids) > 0 {
		open, err := pl.openContests(ctx, ids)
		if err != nil {
			return Hints{}, err
		}
		stale, err := pl.StaleOf(ctx, cardsIn)
		if err != nil {
			return Hints{}, err
		}
		for i, m := range res.Matches {
			res.Matches[i].Contest = cardview.ContestOf(open[m.Card.ID])
			res.Matches[i].Stale = stale[m.Card.ID]
		}
	}
	return res, nil
}

// oneOfEachStatement keeps, on each line, one match per statement.
// matches are sorted by line and stay so.
func oneOfEachStatement(matches []TriggerMatch) []TriggerMatch {
	out := matches[:0]
	for i := 0; i < len(matches); {
		j := i
		for j < len(matches) && matches[j].Line == matches[i].Line {
			j++
		}
		out = append(out, onePerStatement(matches[i:j], func(m TriggerMatch) TriggerCard { return m.Card })...)
		i = j
	}
	return out
}

// onePerStatement keeps, in order, one of xs per statement (a card and its
// published copy are one): the innermost card's (innerCard). It reuses xs,
// which must name each card once.
func onePerStatement[T any](xs []T, card func(T) TriggerCard) []T {
	best := map[string]TriggerCard{}
	for _, x := range xs {
		c := card(x)
		if b, ok := best[c.NormalizedStatement()]; !ok || innerCard(c, b) {
			best[c.NormalizedStatement()] = c
		}
	}
	return slices.DeleteFunc(xs, func(x T) bool { return best[card(x).NormalizedStatement()].ID != card(x).ID })
}

// innerCard says whether x wins over y among cards stating the same: the
// innermost anchor, then the smaller id.
func innerCard(x, y TriggerCard) bool {
	rx, ry := anchorKindRank(x.Anchor.Kind), anchorKindRank(y.Anchor.Kind)
	if rx != ry {
		return rx < ry
	}
	return x.ID < y.ID
}

// anchorKindRank ranks anchor kinds innermost first: worktree 0, repo 1,
// global 2, any other 3.
func anchorKindRank(kind string) int {
	if r := slices.Index([]domain.AnchorKind{domain.AnchorWorktree, domain.AnchorRepo, domain.AnchorGlobal}, domain.AnchorKind(kind)); r >= 0 {
		return r
	}
	return 3
}

// TaggedCards returns the cards of set (compiled fresh when nil) with an
// intent tag or tool need equal to word, case-insensitive, that apply to
// req.File by the scope policy: the word half of an editor's hover.
func (pl *Pipeline) TaggedCards(ctx context.Context, set *TriggerSet, req HintsRequest, word string) ([]TriggerCard, error) {
	set, file, lang, err := pl.hintsInput(ctx, set, req)
	if err != nil {
		return nil, err
	}
	tagged := set.Tagged(word)
	if len(tagged) == 0 {
		return nil, nil
	}
	applies, _, err := pl.cardsApply(ctx, file, lang, tagged)
	if err != nil {
		return nil, err
	}
	tagged = slices.DeleteFunc(tagged, func(c TriggerCard) bool { return !applies[c.ID] })
	return onePerStatement(tagged, func(c TriggerCard) TriggerCard { return c }), nil
}

// hintsInput is set, compiled fresh when nil, and req's file and language.
func (pl *Pipeline) hintsInput(ctx context.Context, set *TriggerSet, req HintsRequest) (*TriggerSet, string, string, error) {
	file, lang := pl.requestFile(req.File)
	if req.Language != "" {
		lang = strings.ToLower(req.Language)
	}
	if set != nil {
		return set, file, lang, nil
	}
	set, err := pl.CompileTriggers(ctx, nil)
	return set, file, lang, err
}

// cardsApply asks the scope policy, in one batch, whether each card applies
// to file.
func (pl *Pipeline) cardsApply(ctx context.Context, file, lang string, cards []TriggerCard) (map[string]bool, policies.Decision, error) {
	set, _, err := pl.PolicySet(ctx)
	if err != nil {
		return nil, policies.Decision{}, err
	}
	in := policies.ScopeInput{Context: policies.ScopeContext{File: file, Language: lang, Anchors: pl.Loc.ChainIDs(),
		Intents: []string{}, Tools: []string{}}}
	seen := map[string]bool{}
	for _, c := range cards {
		if seen[c.ID] {
			continue
		}
		seen[c.ID] = true
		in.Cards = append(in.Cards, cardview.ScopeCard(c.card(), c.Anchor.Kind))
	}
	out, d := set.Scope(ctx, in)
	applies := make(map[string]bool, len(out))
	for id, r := range out {
		applies[id] = r.Applies
	}
	return applies, d, nil
}
