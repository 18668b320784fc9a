package host

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/palacehq/palace/host/anchor"
	"github.com/palacehq/palace/policies"
	"github.com/palacehq/palace/store"
)

// coolingWindow is the window of the injection counts that cool lanes.
const coolingWindow = 30 * 24 * time.Hour

// candidate is one considered card with everything the policies said.
type candidate struct {
	card      store.Card
	anchor    AnchorRef
	rank      int // anchor proximity: worktree 0, repo 1, global 2, another repository 3
	foreign   bool
	relevance float64
	scope     policies.ScopeResult
	lane      policies.LaneResult
	laned     bool
	counts    policies.Counts30d
	ageDays   int
	outcome   string // injection outcome; "" writes no event
}

// assembly is one context request in the making.
type assembly struct {
	req        ContextRequest
	pack       Pack
	considered []*candidate
	// items are the candidates the pack renders or trims, in pack order.
	items []*candidate
	now   time.Time
	// slots and origins are the packed rendering (see packBudget).
	slots   []*slot
	origins []AnchorRef
}

// assemble builds the pack without writing anything.
func (h *Host) assemble(ctx context.Context, raw ContextRequest) (*assembly, error) {
	req, pr, err := h.normalizeContext(raw)
	if err != nil {
		return nil, err
	}
	a := &assembly{req: req, now: h.now()}
	a.pack = Pack{
		RequestID: h.requestID(req), DryRun: req.DryRun, Request: pr, AllRepos: req.AllRepos,
		TransientInstructions: nonNilStrings(req.Instructions),
		Items:                 []Item{}, Skipped: []SkippedCard{}, DistillSuggestions: []DistillSuggestion{},
	}
	for _, id := range h.chainIDs() {
		a.pack.Anchors = append(a.pack.Anchors, h.anchorRef(ctx, id))
	}
	set, fallback, err := h.policySetForContext(ctx)
	if err != nil {
		return nil, err
	}
	a.pack.Policy = PackPolicy{SetHash: set.Hash(), Fallback: fallback}
	if err := h.selectCandidates(ctx, a); err != nil {
		return nil, err
	}
	h.applyPolicies(ctx, a, set)
	h.arrange(a)
	if err := h.cite(ctx, a); err != nil {
		return nil, err
	}
	if pr.IncludeEvidence {
		if err := h.addEvidence(ctx, a); err != nil {
			return nil, err
		}
	}
	h.packBudget(a)
	if err := h.memoryExists(ctx, a); err != nil {
		return nil, err
	}
	sugg, err := h.distillSuggestions(ctx)
	if err != nil {
		return nil, err
	}
	a.pack.DistillSuggestions = sugg
	h.finish(a)
	return a, nil
}

// candidateQuery is the SQL selection of a request: authoritative cards (and
// candidates on request) of the visible anchors, or of every anchor.
func (h *Host) candidateQuery(req ContextRequest, now time.Time) store.CandidateQuery {
	statuses := AuthoritativeStatuses()
	if req.IncludeCandidates {
		statuses = append(statuses, "candidate")
	}
	q := store.CandidateQuery{
		Statuses: statuses, Now: store.FormatTime(now), Limit: CandidateLimit,
		TierOrder: Tiers, AnchorOrder: h.chainIDs(), PersistenceOrder: []string{"foundational", "protected", "standard"},
		Match: ftsQuery(req.Query),
	}
	if !req.AllRepos {
		q.AnchorIDs = h.chainIDs()
	}
	return q
}

// selectCandidates runs the bounded selection of DESIGN §6.1 and fills
// a.considered. Without a query it is one indexed SQL query ordered by
// persistence, tier, anchor and id. With one, the visible cards are ranked
// by BM25 (see context_relevance.go): all of them when they are within
// CandidateLimit, else a quarter of the slots go to the head of the SQL
// order (so foundational cards are never crowded out by text matches), then
// the best matches, then the rest of that order. With AllRepos, FTS5 ranks
// the whole palace instead.
func (h *Host) selectCandidates(ctx context.Context, a *assembly) error {
	q := h.candidateQuery(a.req, a.now)
	terms := queryTerms(a.req.Query)
	total, err := h.store.CountCandidates(ctx, q)
	if err != nil {
		return internal(err, "select context candidates")
	}
	var cards []store.Card
	rel := map[string]float64{}
	switch {
	case len(terms) > 0 && !a.req.AllRepos && total <= CandidateLimit:
		if cards, err = h.store.CandidateCards(ctx, q); err != nil {
			return internal(err, "select context candidates")
		}
		docs := make([]relevanceDoc, len(cards))
		for i, c := range cards {
			docs[i] = relevanceDoc{c.ID, c.Statement, c.Content}
		}
		rel = bm25Rank(terms, docs)
		h.sortByFill(cards)
	case len(terms) > 0 && !a.req.AllRepos:
		texts, err := h.store.CandidateTexts(ctx, q)
		if err != nil {
			return internal(err, "select context candidates")
		}
		docs := make([]relevanceDoc, len(texts))
		for i, t := range texts {
			docs[i] = relevanceDoc{t.ID, t.Statement, t.Content}
		}
		rel = bm25Rank(terms, docs)
		fill := make([]store.Card, len(texts))
		for i, t := range texts {
			fill[i] = store.Card{ID: t.ID, Tier: t.Tier, Persistence: t.Persistence, AnchorID: t.AnchorID}
		}
		h.sortByFill(fill)
		matched := make([]string, 0, len(rel))
		for id := range rel {
			matched = append(matched, id)
		}
		slices.SortFunc(matched, func(x, y string) int {
			if rel[x] != rel[y] {
				if rel[x] > rel[y] {
					return -1
				}
				return 1
			}
			return strings.Compare(x, y)
		})
		if cards, err = h.loadInOrder(ctx, mergeCandidates(fill, matched)); err != nil {
			return err
		}
	default:
		matched, fill, err := h.store.Candidates(ctx, q)
		if err != nil {
			return internal(err, "select context candidates")
		}
		for _, m := range matched {
			r := 1.0
			if best := matched[0].BM25; best < 0 {
				r = m.BM25 / best
			}
			rel[m.ID] = math.Round(r*1000) / 1000
		}
		fillCards := make([]store.Card, len(fill))
		for i, id := range fill {
			fillCards[i] = store.Card{ID: id}
		}
		ids := make([]string, len(matched))
		for i, m := range matched {
			ids[i] = m.ID
		}
		if cards, err = h.loadInOrder(ctx, mergeCandidates(fillCards, ids)); err != nil {
			return err
		}
	}
	refs := map[string]AnchorRef{}
	for _, c := range cards {
		ref, ok := refs[c.AnchorID]
		if !ok {
			ref = h.anchorRef(ctx, c.AnchorID)
			refs[c.AnchorID] = ref
		}
		cand := &candidate{card: c, anchor: ref, relevance: rel[c.ID]}
		switch h.anchorKindOf(c.AnchorID) {
		case anchor.Worktree:
			cand.rank = 0
		case anchor.Repo:
			cand.rank = 1
		case anchor.Global:
			cand.rank = 2
		default:
			cand.rank, cand.foreign = 3, true
		}
		a.considered = append(a.considered, cand)
	}
	a.pack.Selection = Selection{
		TotalCandidates: total, Considered: len(a.considered), CandidateLimit: CandidateLimit,
		InlineCoreIDs: []string{}, InlineScopedIDs: []string{}, RefOnlyIDs: []string{},
		InspectorOnlyIDs: []string{}, TrimmedDueToBudgetIDs: []string{},
	}
	return nil
}

// mergeCandidates picks at most CandidateLimit ids: the first quarter of
// fill, then matched, then the rest of fill, each id once.
func mergeCandidates(fill []store.Card, matched []string) []string {
	var ids []string
	seen := map[string]bool{}
	add := func(id string) {
		if !seen[id] && len(ids) < CandidateLimit {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	head := min(len(fill), CandidateLimit/4)
	for _, c := range fill[:head] {
		add(c.ID)
	}
	for _, id := range matched {
		add(id)
	}
	for _, c := range fill[head:] {
		add(c.ID)
	}
	return ids
}

// loadInOrder reads the cards of ids, keeping the order of ids; ids that
// vanished meanwhile are skipped (the next request sees the change).
func (h *Host) loadInOrder(ctx context.Context, ids []string) ([]store.Card, error) {
	byID, err := h.store.CardsByIDs(ctx, ids)
	if err != nil {
		return nil, internal(err, "read context candidates")
	}
	out := make([]store.Card, 0, len(ids))
	for _, id := range ids {
		if c, ok := byID[id]; ok {
			out = append(out, c)
		}
	}
	return out, nil
}

var persistenceRank = map[string]int{"foundational": 0, "protected": 1, "standard": 2}

// sortByFill orders cards as the SQL fill does: persistence, tier, anchor
// (innermost first, other repositories last), id.
func (h *Host) sortByFill(cards []store.Card) {
	chain := h.chainIDs()
	anchorRank := func(id string) int {
		if i := slices.Index(chain, id); i >= 0 {
			return i
		}
		return len(chain)
	}
	slices.SortStableFunc(cards, func(x, y store.Card) int {
		if d := persistenceRank[x.Persistence] - persistenceRank[y.Persistence]; d != 0 {
			return d
		}
		if d := TierRank(x.Tier) - TierRank(y.Tier); d != 0 {
			return d
		}
		if d := anchorRank(x.AnchorID) - anchorRank(y.AnchorID); d != 0 {
			return d
		}
		return strings.Compare(x.ID, y.ID)
	})
}

// applyPolicies runs palace.scope over every considered card and
// palace.lanes over those that apply, one batch each.
func (h *Host) applyPolicies(ctx context.Context, a *assembly, set *policies.Set) {
	pr := a.pack.Request
	sin := policies.ScopeInput{
		Context: policies.ScopeContext{
			File: pr.File, Language: pr.Language, Field: pr.Field, Intents: pr.Intents, Tools: pr.Tools,
			Query: pr.Query, Anchors: h.chainIDs(),
		},
		Cards: make([]policies.ScopeCard, len(a.considered)),
	}
	for i, c := range a.considered {
		sin.Cards[i] = scopeCard(c.card, c.anchor.Kind)
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
	stats, coolErr := h.cooling(ctx, applying, a.now)
	if coolErr != nil {
		// Counts are advisory: without them cards lane as if fresh, and the
		// pack says so through the lanes decision's error.
		stats = map[string]coolingStats{}
	}
	lin := policies.LanesInput{Cards: make([]policies.LanesCard, len(applying))}
	for i, c := range applying {
		st := stats[c.card.ID]
		c.counts, c.ageDays = st.counts, st.ageDays
		lin.Cards[i] = policies.LanesCard{
			Card: policies.LanesCardInfo{
				ID: c.card.ID, Tier: c.card.Tier, Status: c.card.Status, Persistence: c.card.Persistence,
				RenderPref: c.card.RenderPref, Anchor: c.anchor.Kind, Field: c.card.Field,
			},
			ScopeFit: c.scope.ScopeFit, OperationFit: c.scope.OperationFit, Relevance: c.relevance,
			Counts30d: c.counts, AgeDays: c.ageDays,
		}
	}
	lout, ld := set.Lanes(ctx, lin)
	if coolErr != nil && ld.Error == "" {
		ld.Error = "reading the 30-day injection counts failed, cards were laned as fresh: " + coolErr.Error()
	}
	a.pack.Policy.Lanes = ld
	for _, c := range applying {
		c.lane, c.laned = lout[c.card.ID], true
	}
}

func scopeCard(c store.Card, anchorKind string) policies.ScopeCard {
	return policies.ScopeCard{
		ID: c.ID, Tier: c.Tier, Status: c.Status, Domain: c.Domain, Field: c.Field, Anchor: anchorKind,
		Persistence: c.Persistence, Statement: c.Statement,
		Scope:   policies.CardScope{Paths: c.Scope.Paths, Languages: c.Scope.Languages, Fields: c.Scope.Fields},
		Trigger: policies.CardTrigger{Patterns: c.Trigger.Patterns, Intents: c.Trigger.Intents, ToolNeeds: c.Trigger.ToolNeeds},
	}
}

// arrange dedupes, orders (DESIGN §6.3), applies the dao_tian limit and
// splits the considered cards into items and skipped cards.
func (h *Host) arrange(a *assembly) {
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
		case c.lane.Lane == "inspector_only" || c.lane.RenderForm == "inspector_only":
			c.outcome = "skipped_cooled"
			a.skip(c, "skipped_cooled", "")
		default:
			live = append(live, c)
		}
	}
	slices.SortFunc(live, packOrder)
	daoTian := 0
	for _, c := range live {
		if c.card.Tier == "dao_tian" {
			daoTian++
			if daoTian > a.pack.Request.DaoTianLimit {
				a.skip(c, "dao_tian_limit", "")
				continue
			}
		}
		a.items = append(a.items, c)
	}
	// Skipped cards list in the order they were considered, which is stable.
}

// better says whether c should win over b among duplicates.
func outranksDuplicate(c, b *candidate) bool {
	if c.rank != b.rank {
		return c.rank < b.rank
	}
	if c.lane.Salience != b.lane.Salience {
		return c.lane.Salience > b.lane.Salience
	}
	return c.card.ID < b.card.ID
}

var laneRank = map[string]int{"core": 0, "scoped": 1, "ref_only": 2, "inspector_only": 3}

// packOrder is DESIGN §6.3: lane, tier (dao_tian first), anchor (worktree,
// repo, global, another repository), salience (highest first), id.
func packOrder(x, y *candidate) int {
	if d := laneOrder(x.lane.Lane) - laneOrder(y.lane.Lane); d != 0 {
		return d
	}
	if d := TierRank(x.card.Tier) - TierRank(y.card.Tier); d != 0 {
		return d
	}
	if d := x.rank - y.rank; d != 0 {
		return d
	}
	if d := y.lane.Salience - x.lane.Salience; d != 0 {
		return d
	}
	return strings.Compare(x.card.ID, y.card.ID)
}

func laneOrder(l string) int {
	if r, ok := laneRank[l]; ok {
		return r
	}
	return len(laneRank)
}

// skip records c as skipped for reason.
func (a *assembly) skip(c *candidate, reason, dupOf string) {
	s := SkippedCard{ID: c.card.ID, Tier: c.card.Tier, Anchor: c.anchor.Kind, Reason: reason, DuplicateOf: dupOf}
	if c.laned {
		s.Lane, s.Salience = c.lane.Lane, c.lane.Salience
	}
	if reason == "skipped_cooled" || a.req.Explain {
		s.Why = nonNilStrings(c.scope.Why)
		if c.laned {
			s.SalienceBreakdown = c.lane.Breakdown
		}
	}
	a.pack.Skipped = append(a.pack.Skipped, s)
}

// cite loads the links of the items (one batched read) as citations.
func (h *Host) cite(ctx context.Context, a *assembly) error {
	ids := make([]string, len(a.items))
	for i, c := range a.items {
		ids[i] = c.card.ID
	}
	links, err := h.store.LinksFor(ctx, ids)
	if err != nil {
		return internal(err, "read citations")
	}
	for _, c := range a.items {
		it := Item{
			ID: c.card.ID, Statement: c.card.Statement, Content: c.card.Content, Tier: c.card.Tier, Status: c.card.Status,
			Domain: c.card.Domain, Field: c.card.Field, Anchor: c.anchor, Foreign: c.foreign,
			Persistence: c.card.Persistence, RenderPref: c.card.RenderPref,
			Lane: c.lane.Lane, LaneForm: c.lane.RenderForm, RenderForm: c.lane.RenderForm,
			Salience: c.lane.Salience, SalienceBreakdown: c.lane.Breakdown, WhyApplies: nonNilStrings(c.scope.Why),
			Citations: []Citation{}, Counts30d: c.counts, AgeDays: c.ageDays, Relevance: c.relevance,
		}
		if it.SalienceBreakdown == nil {
			it.SalienceBreakdown = map[string]int{}
		}
		for _, l := range links[c.card.ID] {
			it.Citations = append(it.Citations, Citation{EvidenceID: l.EvidenceID, Role: l.Role, SourceRef: l.SourceRef})
		}
		a.pack.Items = append(a.pack.Items, it)
	}
	return nil
}

// evidenceWindow is how many of the most recently recorded visible evidence
// rows a query ranks for --include-evidence and briefs. Ranking the whole
// palace with FTS5 costs O(matches in every repository) — 23–109 ms at
// 100k evidence rows for common words, measured — so evidence relevance is
// BM25 over this bounded, recent window instead.
const evidenceWindow = 200

// addEvidence adds up to evidenceLimit evidence rows of the visible anchors:
// the best BM25 matches of the query among the newest evidenceWindow rows
// (of the request's field, when it names one), or the newest rows without a
// query.
func (h *Host) addEvidence(ctx context.Context, a *assembly) error {
	rows, err := h.store.RecentEvidence(ctx, h.chainIDs(), a.pack.Request.Field, evidenceWindow)
	if err != nil {
		return internal(err, "read evidence")
	}
	if terms := queryTerms(a.req.Query); len(terms) > 0 {
		docs := make([]relevanceDoc, len(rows))
		for i, e := range rows {
			docs[i] = relevanceDoc{id: e.ID, content: e.Content}
		}
		rel := bm25Rank(terms, docs)
		matched := rows[:0:0]
		for _, e := range rows {
			if rel[e.ID] > 0 {
				matched = append(matched, e)
			}
		}
		// Best first; among equals the newer (rows are newest first).
		slices.SortStableFunc(matched, func(x, y store.Evidence) int {
			switch {
			case rel[x.ID] > rel[y.ID]:
				return -1
			case rel[x.ID] < rel[y.ID]:
				return 1
			}
			return 0
		})
		rows = matched
	}
	for _, e := range rows[:min(len(rows), evidenceLimit)] {
		a.pack.Evidence = append(a.pack.Evidence, EvidenceItem{
			ID: e.ID, Field: e.Field, Provenance: e.Provenance, SourceRef: e.SourceRef,
			Anchor: h.anchorRef(ctx, e.AnchorID), Content: e.Content,
		})
	}
	return nil
}

// requestFile makes the request's file worktree-relative (slash-separated)
// and guesses its language from the extension.
func (h *Host) requestFile(file string) (rel, lang string) {
	if file == "" {
		return "", ""
	}
	p := file
	if !filepath.IsAbs(p) {
		p = filepath.Join(h.loc.Dir, p)
	}
	p = filepath.Clean(p)
	if c, err := anchor.Canonical(p); err == nil {
		p = c
	}
	root := h.loc.Dir
	if h.loc.InGit {
		root = h.loc.Worktree
	}
	if r, err := filepath.Rel(root, p); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		p = r
	}
	return filepath.ToSlash(p), languageOf(p)
}

var extLanguages = map[string]string{
	".go": "go", ".rs": "rust", ".py": "python", ".ts": "typescript", ".tsx": "typescriptreact",
	".js": "javascript", ".jsx": "javascriptreact", ".java": "java", ".kt": "kotlin", ".c": "c", ".h": "c",
	".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp", ".rb": "ruby", ".sh": "shellscript", ".md": "markdown",
	".sql": "sql", ".rego": "rego", ".yaml": "yaml", ".yml": "yaml", ".json": "json", ".toml": "toml",
	".swift": "swift", ".cs": "csharp", ".php": "php", ".lua": "lua", ".zig": "zig",
}

func languageOf(path string) string {
	return extLanguages[strings.ToLower(filepath.Ext(path))]
}

func nonNilStrings(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}

// embeddedDefaults compiles the embedded policy set once per process.
var embeddedDefaults = func() func(context.Context) (*policies.Set, error) {
	var once sync.Once
	var set *policies.Set
	var err error
	return func(ctx context.Context) (*policies.Set, error) {
		once.Do(func() { set, err = policies.LoadDefaults(ctx, policies.Options{}) })
		return set, err
	}
}()
