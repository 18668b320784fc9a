package host

import (
	"context"
	"errors"
	"sort"
	"sync"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/cardview"
	"github.com/palacehq/palace/host/pack"
	"github.com/palacehq/palace/host/staleness"
)

// EditorViews answers what an editor shows of a palace (hover, code lens,
// card details) in one call each. It caches dry-run packs and card details
// until Reset, which the editor calls when its data generation moves; a
// value computed while Reset runs is not kept. Safe for concurrent use.
type EditorViews struct {
	h *Host

	mu    sync.Mutex
	gen   uint64
	packs map[viewPackKey]*pack.Pack
	cards map[string]Card
}

type viewPackKey struct {
	file, lang string
	budget     int
}

// EditorViews returns an empty view cache over h.
func (h *Host) EditorViews() *EditorViews {
	v := &EditorViews{h: h}
	v.Reset()
	return v
}

// Reset drops everything cached: the next view reads the palace again.
func (v *EditorViews) Reset() {
	v.mu.Lock()
	v.gen++
	v.packs = map[viewPackKey]*pack.Pack{}
	v.cards = map[string]Card{}
	v.mu.Unlock()
}

// HoverRequest is where an editor's cursor is.
type HoverRequest struct {
	// File is the document's path; Language its editor language id.
	File     string
	Language string
	// Budget is the character budget of the file's pack (0: the default).
	Budget int
	// Line is the cursor's line, 1-based as TriggerMatch.Line.
	Line int
	// Word is the word under the cursor, "" when there is none.
	Word string
	// Matches are the document's trigger matches (Hints.Matches, sorted
	// by line), which the editor keeps per document version.
	Matches []pack.TriggerMatch
	// Triggers is the set the matches came from; the word is looked up in
	// its intent tags and tool needs (compiled fresh when nil).
	Triggers *pack.TriggerSet
}

// HoverView is what a hover shows: the cards triggered at the cursor, the
// cards the file's pack renders inline, by tier, and counts of the rest.
type HoverView struct {
	// Triggered are the cards whose patterns match the cursor's line, then
	// those with an intent or tool need equal to the word; each once.
	Triggered []HoverCard
	// File is the file as the pack names it (worktree-relative).
	File string
	// Applies are the cards the file's pack renders in full or compact,
	// grouped by tier in domain.Tiers order, in pack order inside a tier.
	Applies []TierCards
	// Flagged are the pack's cards shown only as references because they
	// are contested or stale (also counted in Refs).
	Flagged []HoverCard
	// Refs count reference lines, Trimmed items the budget left out,
	// Cooled cards cooled to inspector_only.
	Refs, Trimmed, Cooled int
}

// TierCards are the cards of one tier.
type TierCards struct {
	Tier  domain.Tier
	Cards []HoverCard
}

// HoverCard is one card of a hover.
type HoverCard struct {
	ID         string
	Statement  string
	Tier       domain.Tier
	Status     domain.Status
	AnchorKind string
	// Counts are the card's evidence by role: all of it for a triggered
	// card, the pack's citations for a card that applies.
	Counts domain.RoleCounts
	// Pattern is the trigger pattern that matches the cursor's line, or
	// Tag the intent tag or tool need equal to the word (Triggered only).
	Pattern string
	Tag     string
	// Contest is set when the card is contested.
	Contest *cardview.ItemContest
	// Stale is set when the code the card's evidence saw changed, or its
	// review date passed: an editor shows the warning with the statement.
	Stale *staleness.Stale
}

// Label is the card as an editor names it in a line: ‹tier› statement.
func (c HoverCard) Label() string { return "‹" + string(c.Tier) + "› " + c.Statement }

// LensRequest is the file a code lens is on.
type LensRequest struct {
	File     string
	Language string
	// Budget is the character budget of the file's pack (0: the default).
	Budget int
	// Matches are the document's trigger matches (Hints.Matches): the
	// cards its inlay hints show.
	Matches []pack.TriggerMatch
}

// LensView is what a code lens on a file shows: every card of its pack and
// those triggered on its lines, each once (a published copy is its
// original), by tier.
type LensView struct {
	File string
	// ByTier counts the cards, by tier.
	ByTier map[domain.Tier]int
	// Inline counts cards rendered full or compact, Refs reference lines,
	// Triggered the cards only the document's lines trigger.
	Inline, Refs, Triggered int
	// Contested and Stale count the cards above with each warning.
	Contested, Stale int
	// IDs are the counted cards, pack order first.
	IDs []string
}

// Hover returns the hover at req's cursor.
func (v *EditorViews) Hover(ctx context.Context, req HoverRequest) (HoverView, error) {
	var view HoverView
	seen := map[string]bool{}
	ms := req.Matches
	for i := sort.Search(len(ms), func(i int) bool { return ms[i].Line >= req.Line }); i < len(ms) && ms[i].Line == req.Line; i++ {
		if seen[ms[i].Card.ID] {
			continue
		}
		seen[ms[i].Card.ID] = true
		c, err := v.Card(ctx, ms[i].Card.ID)
		if err != nil {
			return HoverView{}, err
		}
		hc := cardView(c)
		hc.Pattern = ms[i].Pattern
		view.Triggered = append(view.Triggered, hc)
	}
	if req.Word != "" {
		tagged, err := v.h.Pack().TaggedCards(ctx, req.Triggers, pack.HintsRequest{File: req.File, Language: req.Language}, req.Word)
		if err != nil {
			return HoverView{}, err
		}
		for _, t := range tagged {
			if seen[t.ID] {
				continue
			}
			seen[t.ID] = true
			c, err := v.Card(ctx, t.ID)
			if err != nil {
				return HoverView{}, err
			}
			hc := cardView(c)
			hc.Tag = req.Word
			view.Triggered = append(view.Triggered, hc)
		}
	}
	p, err := v.pack(ctx, req.File, req.Language, req.Budget)
	if err != nil {
		return HoverView{}, err
	}
	view.File = p.Request.File
	byTier := map[domain.Tier][]HoverCard{}
	for _, it := range p.Items {
		hc := HoverCard{ID: it.ID, Statement: it.Statement, Tier: it.Tier, Status: it.Status, AnchorKind: it.Anchor.Kind,
			Counts: citationCounts(it.Citations), Contest: it.Contest, Stale: it.Stale}
		switch it.RenderForm {
		case domain.FormInlineFull, domain.FormInlineCompact:
			byTier[it.Tier] = append(byTier[it.Tier], hc)
		case domain.FormRefOnly:
			view.Refs++
			if (it.Contest != nil || it.Stale != nil) && !seen[it.ID] {
				view.Flagged = append(view.Flagged, hc)
			}
		default:
			view.Trimmed++
		}
	}
	for _, tier := range domain.Tiers {
		if cs := byTier[tier]; len(cs) > 0 {
			view.Applies = append(view.Applies, TierCards{Tier: tier, Cards: cs})
		}
	}
	view.Cooled = cooledCount(p)
	return view, nil
}

// Lens returns the code lens of a file.
func (v *EditorViews) Lens(ctx context.Context, req LensRequest) (LensView, error) {
	p, err := v.pack(ctx, req.File, req.Language, req.Budget)
	if err != nil {
		return LensView{}, err
	}
	view := LensView{File: p.Request.File, ByTier: map[domain.Tier]int{}, IDs: []string{}}
	// One statement, one card: the pack keeps the innermost of a card and
	// its copies, and the hints do too.
	seen := map[string]bool{}
	count := func(id string, tier domain.Tier, contested, stale bool) {
		view.ByTier[tier]++
		view.IDs = append(view.IDs, id)
		if contested {
			view.Contested++
		}
		if stale {
			view.Stale++
		}
	}
	for _, it := range p.Items {
		switch it.RenderForm {
		case domain.FormInlineFull, domain.FormInlineCompact:
			view.Inline++
		case domain.FormRefOnly:
			view.Refs++
		default:
			continue
		}
		seen[it.ID] = true
		seen[domain.NormalizeStatement(it.Statement)] = true
		count(it.ID, it.Tier, it.Contest != nil, it.Stale != nil)
	}
	for _, m := range req.Matches {
		norm := m.Card.NormalizedStatement()
		if seen[m.Card.ID] || seen[norm] {
			continue
		}
		seen[m.Card.ID], seen[norm] = true, true
		view.Triggered++
		count(m.Card.ID, m.Card.Tier, m.Contest != nil, m.Stale != nil)
	}
	return view, nil
}

// Card returns one card with its links and counts (ShowCard), cached.
func (v *EditorViews) Card(ctx context.Context, id string) (Card, error) {
	return viewCached(v, func() map[string]Card { return v.cards }, id, func() (Card, error) { return v.h.ShowCard(ctx, id) })
}

// pack is the dry-run pack of a file (writes nothing).
func (v *EditorViews) pack(ctx context.Context, file, lang string, budget int) (*pack.Pack, error) {
	return viewCached(v, func() map[viewPackKey]*pack.Pack { return v.packs }, viewPackKey{file, lang, budget}, func() (*pack.Pack, error) {
		p, err := v.h.Pack().Context(ctx, pack.ContextRequest{File: file, Language: lang, Budget: budget, DryRun: true})
		if errors.Is(err, pack.ErrOtherCheckout) {
			// A file of a nested checkout (a submodule) under the editor's
			// workspace: this workspace's memory says nothing about it.
			return &pack.Pack{}, nil
		}
		return &p, err
	})
}

// viewCached returns the cached value of k, or loads it outside the lock
// and keeps it unless Reset ran meanwhile. m returns the current map.
func viewCached[K comparable, V any](v *EditorViews, m func() map[K]V, k K, load func() (V, error)) (V, error) {
	v.mu.Lock()
	val, ok := m()[k]
	gen := v.gen
	v.mu.Unlock()
	if ok {
		return val, nil
	}
	val, err := load()
	if err != nil {
		var zero V
		return zero, err
	}
	v.mu.Lock()
	if v.gen == gen {
		m()[k] = val
	}
	v.mu.Unlock()
	return val, nil
}

func cardView(c Card) HoverCard {
	return HoverCard{ID: c.ID, Statement: c.Statement, Tier: c.Tier, Status: c.Status, AnchorKind: c.Anchor.Kind, Counts: c.Counts,
		Contest: c.Contest, Stale: c.Stale}
}

func citationCounts(cs []cardview.Citation) domain.RoleCounts {
	var out domain.RoleCounts
	for _, c := range cs {
		out.Add(c.Role, 1)
	}
	return out
}

// cooledCount counts the skipped cards cooling kept out.
func cooledCount(p *pack.Pack) int {
	n := 0
	for _, sk := range p.Skipped {
		if sk.Reason == string(domain.OutcomeSkippedCooled) {
			n++
		}
	}
	return n
}
