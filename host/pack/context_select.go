package pack

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/cardview"
	"github.com/palacehq/palace/host/staleness"
	"github.com/palacehq/palace/internal/hosterr"
	"github.com/palacehq/palace/internal/neardup"
	"github.com/palacehq/palace/internal/strlist"
	"github.com/palacehq/palace/policies"
	"github.com/palacehq/palace/store"
)

// candidate is one considered card with everything the policies said.
type candidate struct {
	card      domain.Card
	anchor    cardview.AnchorRef
	rank      int // anchor proximity: worktree 0, repo 1, global 2, another repository 3
	foreign   bool
	relevance float64
	// matched are the request terms the card holds (the why of its relevance).
	matched []string
	scope   policies.ScopeResult
	lane    policies.LaneResult
	laned   bool
	counts  policies.Counts30d
	ageDays int
	outcome string            // injection outcome; "" writes no event
	roles   domain.RoleCounts // an item's evidence links by role (cite)
	// contests are the card's open contests: it stays out of the inline
	// lanes while there are any.
	contests []store.Contest
	stale    *staleness.Stale
	nearOf   string // the inlined card this one nearly repeats (dedupeNear)
}

// assembly is one context request in the making.
type assembly struct {
	req        ContextRequest
	pack       Pack
	considered []*candidate
	// items are the candidates the pack renders or trims, in pack order.
	items []*candidate
	now   time.Time
	// slots and origins (the other repositories' anchors, in section order)
	// are the packed rendering (packWith).
	slots     []*slot
	origins   []cardview.AnchorRef
	signature string               // adoption signals are weighed against it (Signature)
	lanes     policies.LanesConfig // of the serving policy set
	wakeNote  bool                 // the preamble says it is the wake-up layer (packBudget)
}

// assemble builds the pack without writing anything.
func (pl *Pipeline) assemble(ctx context.Context, raw ContextRequest) (*assembly, error) {
	req, pr, err := pl.normalizeContext(raw)
	if err != nil {
		return nil, err
	}
	a := &assembly{req: req, now: pl.Now(), signature: Signature(pr.Query, pr.File, pr.Field, pr.Intents)}
	a.pack = Pack{
		RequestID: pl.requestID(req), DryRun: req.DryRun, Request: pr, AllRepos: req.AllRepos,
		TransientInstructions: strlist.NonNil(req.Instructions),
		Items:                 []Item{}, Skipped: []SkippedCard{}, DistillSuggestions: []DistillSuggestion{},
	}
	for _, id := range pl.Loc.ChainIDs() {
		a.pack.Anchors = append(a.pack.Anchors, pl.anchorRef(ctx, id))
	}
	set, fallback, err := pl.PolicySet(ctx)
	if err != nil {
		return nil, err
	}
	a.pack.Policy = PackPolicy{SetHash: set.Hash(), Fallback: fallback}
	a.lanes = set.LanesConfig()
	if err := pl.selectCandidates(ctx, a); err != nil {
		return nil, err
	}
	pl.applyPolicies(ctx, a, set)
	pl.StampFileState(ctx, &a.pack.Policy.Scope)
	pl.StampFileState(ctx, &a.pack.Policy.Lanes)
	if err := pl.applyContests(ctx, a); err != nil {
		return nil, err
	}
	if err := pl.applyStaleness(ctx, a); err != nil {
		return nil, err
	}
	pl.arrange(a)
	if err := pl.cite(ctx, a); err != nil {
		return nil, err
	}
	if pr.IncludeEvidence {
		if err := pl.addEvidence(ctx, a); err != nil {
			return nil, err
		}
	}
	pl.packBudget(a)
	if err := pl.memoryExists(ctx, a); err != nil {
		return nil, err
	}
	sugg, err := pl.distillSuggestions(ctx)
	if err != nil {
		return nil, err
	}
	a.pack.DistillSuggestions = sugg
	pl.finish(a)
	return a, nil
}

// candidateQuery is the SQL selection of a request: authoritative cards (and
// candidates on request) of the visible anchors, or of every anchor.
func (pl *Pipeline) candidateQuery(req ContextRequest, now time.Time) store.CandidateQuery {
	statuses := domain.AuthoritativeStatuses()
	if req.IncludeCandidates {
		statuses = append(statuses, domain.StatusCandidate)
	}
	q := store.CandidateQuery{
		Statuses: statuses, Now: store.FormatTime(now), Limit: CandidateLimit,
		TierOrder: domain.Tiers, AnchorOrder: pl.Loc.ChainIDs(), PersistenceOrder: []domain.Persistence{domain.PersistenceFoundational, domain.PersistenceProtected, domain.PersistenceStandard},
		Match: ftsQuery(req.Query),
	}
	if !req.AllRepos {
		q.AnchorIDs = pl.Loc.ChainIDs()
	}
	return q
}

// applyPolicies runs palace.scope over every considered card and
// palace.lanes over those that apply, one batch each.
func (pl *Pipeline) applyPolicies(ctx context.Context, a *assembly, set *policies.Set) {
	pr := a.pack.Request
	sin := policies.ScopeInput{
		Context: policies.ScopeContext{
			File: pr.File, Language: pr.Language, Field: pr.Field, Intents: pr.Intents, Tools: pr.Tools,
			Query: pr.Query, Anchors: pl.Loc.ChainIDs(), Wake: pr.Wake,
		},
		Cards: make([]policies.ScopeCard, len(a.considered)),
	}
	for i, c := range a.considered {
		sin.Cards[i] = cardview.ScopeCard(c.card, c.anchor.Kind)
		sin.Cards[i].Relevance = c.relevance
	}
	sout, sd := set.Scope(ctx, sin)
	a.pack.Policy.Scope = sd
	var applying []*candidate
	for _, c := range a.considered {
		c.scope = sout[c.card.ID]
		if c.scope.Applies {
			applying = append(applying, c)
		} else {
			c.outcome = "skipped_scope"
		}
	}
	if len(applying) == 0 {
		_, a.pack.Policy.Lanes = set.Lanes(ctx, policies.LanesInput{Cards: []policies.LanesCard{}})
		return
	}
	stats, coolErr := pl.cooling(ctx, applying, a.now)
	if coolErr != nil {
		// Counts and signals are advisory: without them cards lane as if
		// fresh, and the lanes decision's error says so.
		stats = map[string]coolingStats{}
	}
	sigErr := pl.addSignals(ctx, applying, a.signature, a.now, stats)
	lin := policies.LanesInput{Cards: make([]policies.LanesCard, len(applying)), Config: a.lanes, Wake: pr.Wake}
	for i, c := range applying {
		st := stats[c.card.ID]
		c.counts, c.ageDays = st.counts, st.ageDays
		lin.Cards[i] = policies.LanesCard{
			Card: policies.LanesCardInfo{
				ID: c.card.ID, Tier: string(c.card.Tier), Status: string(c.card.Status), Persistence: string(c.card.Persistence),
				RenderPref: string(c.card.RenderPref), Anchor: c.anchor.Kind, Field: c.card.Field,
			},
			ScopeFit: c.scope.ScopeFit, OperationFit: c.scope.OperationFit, Relevance: c.relevance,
			Counts30d: c.counts, AgeDays: c.ageDays,
		}
	}
	lout, ld := set.Lanes(ctx, lin)
	if coolErr != nil && ld.Error == "" {
		ld.Error = "reading the 30-day injection counts failed, cards were laned as fresh: " + coolErr.Error()
	}
	if sigErr != nil && ld.Error == "" {
		ld.Error = "reading the adoption signals failed, cards were laned without them: " + sigErr.Error()
	}
	a.pack.Policy.Lanes = ld
	for _, c := range applying {
		c.lane, c.laned = lout[c.card.ID], true
	}
}

// arrange dedupes, orders, applies the per-lane count limits and the
// dao_tian limit, and splits the considered cards into items and skipped.
func (pl *Pipeline) arrange(a *assembly) {
	// Duplicates: a published copy and its original (or two cards with the
	// same statement) both apply; the innermost wins.
	best := map[string]*candidate{}
	for _, c := range a.considered {
		if !c.scope.Applies {
			continue
		}
		k := c.card.StatementNorm
		if b, ok := best[k]; !ok || outranksDuplicate(c, b) {
			best[k] = c
		}
	}
	var live []*candidate
	for _, c := range a.considered {
		switch {
		case !c.scope.Applies:
			a.skip(c, "skipped_scope", "")
		case best[c.card.StatementNorm] != c:
			a.skip(c, "duplicate", best[c.card.StatementNorm].card.ID)
		case c.lane.Lane == domain.LaneInspectorOnly || c.lane.RenderForm == domain.FormInspectorOnly:
			// Only a card cooling kept out records its skip (and cools
			// further): what other requests ask, or a request with no
			// task, never cools a card.
			switch {
			case a.pack.Request.Wake:
				a.skip(c, "not_in_wake", "")
			case cooledOut(c.lane):
				c.outcome = store.OutcomeSkippedCooled
				a.skip(c, "skipped_cooled", "")
			default:
				a.skip(c, "not_relevant", "")
			}
		default:
			live = append(live, c)
		}
	}
	slices.SortFunc(live, packOrder)
	dedupeNear(live, a.lanes.CoreInlineLimit+a.lanes.ScopedInlineLimit)
	slices.SortFunc(live, packOrder)
	// The lanes' count limits: a lane's overflow (the last in pack order)
	// moves down one lane (core → scoped → references → out); a wake-up pack
	// leaves the scoped lane's overflow out instead.
	limits := map[domain.Lane]int{domain.LaneCore: a.lanes.CoreInlineLimit, domain.LaneScoped: a.lanes.ScopedInlineLimit, domain.LaneRefOnly: a.lanes.RefOnlyLimit}
	var overflow []*candidate
	for _, lane := range []domain.Lane{domain.LaneCore, domain.LaneScoped} {
		n := 0
		for _, c := range live {
			if c.lane.Lane != lane {
				continue
			}
			if n++; n > limits[lane] {
				if lane == domain.LaneScoped && a.pack.Request.Wake {
					overflow = append(overflow, c)
					continue
				}
				demote(c, lane)
			}
		}
		slices.SortFunc(live, packOrder)
	}
	if len(overflow) > 0 {
		live = slices.DeleteFunc(live, func(c *candidate) bool { return slices.Contains(overflow, c) })
		for _, c := range overflow {
			a.skip(c, "lane_limit", "")
		}
	}
	daoTian, refs := 0, 0
	for _, c := range live {
		if c.card.Tier == domain.TierDaoTian {
			daoTian++
			if daoTian > a.pack.Request.DaoTianLimit {
				a.skip(c, "dao_tian_limit", "")
				continue
			}
		}
		if c.lane.Lane == domain.LaneRefOnly {
			if refs++; refs > limits[domain.LaneRefOnly] {
				a.skip(c, "lane_limit", "")
				continue
			}
		}
		a.items = append(a.items, c)
	}
}

// dedupeNear keeps a pack from inlining two near-duplicates
// (internal/neardup): in pack order, an inline-bound card that nearly
// repeats one inlined before it becomes a reference line to it. It stops
// once slots cards (the inline lanes' sizes together) are kept.
func dedupeNear(live []*candidate, slots int) {
	type kept struct {
		c     *candidate
		words []string
	}
	var inline []kept
	for _, c := range live {
		if len(inline) == slots {
			return
		}
		if c.lane.Lane != domain.LaneCore && c.lane.Lane != domain.LaneScoped ||
			c.lane.RenderForm != domain.FormInlineFull && c.lane.RenderForm != domain.FormInlineCompact {
			continue
		}
		words := neardup.Words(c.card.Statement)
		var twin *kept
		for i := range inline {
			// Sizes apart past the threshold's ratio cannot reach it.
			if n, m := len(words), len(inline[i].words); float64(min(n, m)) < neardup.Threshold*float64(max(n, m)) {
				continue
			}
			if neardup.Similarity(words, inline[i].words) >= neardup.Threshold {
				twin = &inline[i]
				break
			}
		}
		if twin == nil {
			inline = append(inline, kept{c, words})
			continue
		}
		c.nearOf = twin.c.card.ID
		c.lane.Lane, c.lane.RenderForm = domain.LaneRefOnly, domain.FormRefOnly
		c.scope.Why = append(c.scope.Why, fmt.Sprintf("a near-duplicate of %s (%.0f%% of their words in common), which the pack inlines: a reference to it",
			twin.c.card.ID, 100*neardup.Similarity(words, twin.words)))
	}
}

// cooledOut says whether a card left at inspector_only would have had a
// place without its cooling penalties.
func cooledOut(l policies.LaneResult) bool {
	penalty := 0
	for _, k := range []string{"skipped", "trimmed", "inactivity"} {
		penalty -= min(0, l.Breakdown[k])
	}
	return penalty > 0 && l.Salience+penalty >= refOnlyFloor
}

// refOnlyFloor is the default lanes policy's lowest ref_only salience.
const refOnlyFloor = 36

// demote moves c one lane down past its lane's count limit, saying so.
func demote(c *candidate, from domain.Lane) {
	to := map[domain.Lane]domain.Lane{domain.LaneCore: domain.LaneScoped, domain.LaneScoped: domain.LaneRefOnly}[from]
	c.lane.Lane = to
	if to == domain.LaneRefOnly {
		c.lane.RenderForm = domain.FormRefOnly
	}
	c.scope.Why = append(c.scope.Why, fmt.Sprintf("the %s lane is full (its limit is a lanes setting), so it moved to %s", from, to))
}

// outranksDuplicate says whether c wins over b among duplicates.
func outranksDuplicate(c, b *candidate) bool {
	return cmp.Or(c.rank-b.rank, b.lane.Salience-c.lane.Salience, strings.Compare(c.card.ID, b.card.ID)) < 0
}

// packOrder is the pack order: lane, then value — salience, which holds the
// request's relevance, then relevance itself — then tier (dao_tian first),
// anchor (worktree, repo, global, another repository) and id.
func packOrder(x, y *candidate) int {
	return cmp.Or(cardview.LaneOrder(x.lane.Lane)-cardview.LaneOrder(y.lane.Lane), y.lane.Salience-x.lane.Salience,
		cmp.Compare(y.relevance, x.relevance), x.card.Tier.Rank()-y.card.Tier.Rank(), x.rank-y.rank, strings.Compare(x.card.ID, y.card.ID))
}

// skip records c as skipped for reason.
func (a *assembly) skip(c *candidate, reason, dupOf string) {
	s := SkippedCard{ID: c.card.ID, Tier: c.card.Tier, Anchor: c.anchor.Kind, Reason: reason, DuplicateOf: dupOf, Relevance: c.relevance}
	if c.laned {
		s.Lane, s.Salience = c.lane.Lane, c.lane.Salience
	}
	// On a cooled palace most of a pack is skipped cards: details on request.
	if a.req.Explain {
		s.Why = strlist.NonNil(c.scope.Why)
		if c.laned {
			s.SalienceBreakdown = c.lane.Breakdown
		}
	}
	a.pack.Skipped = append(a.pack.Skipped, s)
}

// maxCitations bounds the citations an item carries (pickCitations).
const maxCitations = 8

// cite builds the items: their links, picked citations and source refs
// (two batched reads).
func (pl *Pipeline) cite(ctx context.Context, a *assembly) error {
	ids := make([]string, len(a.items))
	for i, c := range a.items {
		ids[i] = c.card.ID
	}
	links, err := pl.Store.LinkRows(ctx, ids)
	if err != nil {
		return hosterr.Internal(err, "read citations")
	}
	picked := make(map[string][]domain.Link, len(ids))
	var evIDs []string
	for _, id := range ids {
		p := pickCitations(links[id])
		picked[id] = p
		for _, l := range p {
			evIDs = append(evIDs, l.EvidenceID)
		}
	}
	refs, err := pl.Store.SourceRefs(ctx, evIDs)
	if err != nil {
		return hosterr.Internal(err, "read citations")
	}
	for _, c := range a.items {
		c.roles = domain.CountLinks(links[c.card.ID])
		why := strlist.NonNil(c.scope.Why)
		if len(c.matched) > 0 {
			why = append(why, fmt.Sprintf("relevance %.3g: the request shares %s with the card", c.relevance, strings.Join(c.matched, ", ")))
		}
		it := Item{
			ID: c.card.ID, Statement: c.card.Statement, Content: c.card.Content, Tier: c.card.Tier, Status: c.card.Status,
			Domain: c.card.Domain, Field: c.card.Field, Anchor: c.anchor, Foreign: c.foreign,
			Persistence: c.card.Persistence, RenderPref: c.card.RenderPref,
			Lane: c.lane.Lane, LaneForm: c.lane.RenderForm, RenderForm: c.lane.RenderForm,
			Salience: c.lane.Salience, SalienceBreakdown: c.lane.Breakdown, WhyApplies: why,
			Citations: []cardview.Citation{}, CitationCount: len(links[c.card.ID]), Counts30d: c.counts, AgeDays: c.ageDays, Relevance: c.relevance,
		}
		if it.SalienceBreakdown == nil {
			it.SalienceBreakdown = map[string]int{}
		}
		for _, l := range picked[c.card.ID] {
			it.Citations = append(it.Citations, cardview.Citation{EvidenceID: l.EvidenceID, Role: l.Role, SourceRef: refs[l.EvidenceID]})
		}
		it.Contest = cardview.ContestOf(c.contests)
		it.Stale = c.stale
		it.NearDuplicateOf = c.nearOf
		// A foundational card in full past its cap renders compact: its
		// standing keeps it inline, not its length.
		if it.LaneForm == "inline_full" && it.Persistence == "foundational" &&
			runeLen(it.Statement)+runeLen(it.Content) > a.lanes.FoundationalInlineCharLimit {
			it.LaneForm, it.RenderForm = "inline_compact", "inline_compact"
		}
		a.pack.Items = append(a.pack.Items, it)
	}
	return nil
}

// pickCitations keeps at most maxCitations links: counterexamples first,
// then the rest in link order; the result keeps link order.
func pickCitations(links []domain.Link) []domain.Link {
	if len(links) <= maxCitations {
		return links
	}
	keep := make([]bool, len(links))
	n := 0
	for _, counter := range []bool{true, false} {
		for i, l := range links {
			if !keep[i] && n < maxCitations && (!counter || l.Role == domain.RoleCounterexample) {
				keep[i] = true
				n++
			}
		}
	}
	out := make([]domain.Link, 0, n)
	for i, l := range links {
		if keep[i] {
			out = append(out, l)
		}
	}
	return out
}

// embeddedDefaults compiles the embedded policy set once per process.
var embeddedDefaults = sync.OnceValues(func() (*policies.Set, error) {
	return policies.LoadDefaults(context.Background(), policies.Options{})
})
