package pack

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/cardview"
	"github.com/palacehq/palace/host/staleness"
	"github.com/palacehq/palace/internal/hosterr"
	"github.com/palacehq/palace/internal/strlist"
	"github.com/palacehq/palace/store"
)

// briefCitationsPerCard and briefMaxEvidence bound the cited evidence a
// brief reads, in pack order; counterexamples are always read.
const (
	briefCitationsPerCard = 3
	briefMaxEvidence      = 24
)

// BriefRequest asks for a brief: it selects as a ContextRequest with the
// same fields does, without a budget, so every card that applies is briefed.
type BriefRequest struct {
	Query             string   `json:"query,omitempty"`
	File              string   `json:"file,omitempty"`
	Language          string   `json:"language,omitempty"`
	Field             string   `json:"field,omitempty"`
	Intents           []string `json:"intents,omitempty"`
	Tools             []string `json:"tools,omitempty"`
	DaoTianLimit      *int     `json:"dao_tian_limit,omitempty"`
	IncludeCandidates bool     `json:"include_candidates,omitempty"`
	AllRepos          bool     `json:"all_repos,omitempty"`
}

// Brief is a deterministic, citation-first report over a context selection
// (no LLM): what is known, from what evidence, what is open, and what to do.
type Brief struct {
	Query        string          `json:"query,omitempty"`
	Summary      string          `json:"summary"`
	KeyFacts     []BriefFact     `json:"key_facts"`
	Evidence     []BriefEvidence `json:"evidence"`
	Cards        []BriefCard     `json:"cards"`
	Entities     []BriefEntity   `json:"entities"`
	Unresolved   []BriefCue      `json:"unresolved"`
	Uncertainty  []BriefSignal   `json:"uncertainty"`
	NextActions  []BriefAction   `json:"next_actions"`
	MemoryExists MemoryExists    `json:"memory_exists"`
	Policy       PackPolicy      `json:"policy"`
}

// BriefFact is the statement of an authoritative card that applies and is
// not contested.
type BriefFact struct {
	CardID    string      `json:"card_id"`
	Tier      domain.Tier `json:"tier"`
	Anchor    string      `json:"anchor"`
	Statement string      `json:"statement"`
	Cites     []string    `json:"cites"`
}

// BriefEvidence is an evidence row the brief cites: linked by a briefed
// card, or matching the query.
type BriefEvidence struct {
	ID         string            `json:"id"`
	Field      string            `json:"field"`
	Provenance domain.Provenance `json:"provenance"`
	SourceRef  string            `json:"source_ref"`
	Excerpt    string            `json:"excerpt"`
	Truncated  bool              `json:"truncated,omitempty"`
	CitedBy    []string          `json:"cited_by"`
	Roles      []string          `json:"roles"`
	// Matched marks rows found by the query rather than through a card.
	Matched bool `json:"matched,omitempty"`
}

// BriefCard is a briefed card with its citations.
type BriefCard struct {
	ID         string              `json:"id"`
	Tier       domain.Tier         `json:"tier"`
	Status     domain.Status       `json:"status"`
	Statement  string              `json:"statement"`
	Anchor     cardview.AnchorRef  `json:"anchor"`
	Lane       domain.Lane         `json:"lane"`
	RenderForm domain.RenderForm   `json:"render_form"`
	Salience   int                 `json:"salience"`
	WhyApplies []string            `json:"why_applies"`
	Citations  []cardview.Citation `json:"citations"`
	Evidence   domain.RoleCounts   `json:"evidence"`
	// Contest is set when the card is contested: it is no key fact, and
	// the warning cites the contradicting evidence.
	Contest *cardview.ItemContest `json:"contest,omitempty"`
}

// BriefEntity is an identifier, path, command or URL found in cited text.
type BriefEntity struct {
	Kind    string   `json:"kind"`
	Text    string   `json:"text"`
	Count   int      `json:"count"`
	Sources []string `json:"sources"`
}

// BriefCue is a line that signals unresolved work.
type BriefCue struct {
	Cue       string `json:"cue"`
	Text      string `json:"text"`
	Source    string `json:"source"`
	Truncated bool   `json:"truncated,omitempty"`
}

// BriefSignal is one reason for doubt.
type BriefSignal struct {
	Code    string   `json:"code"`
	Message string   `json:"message"`
	IDs     []string `json:"ids"`
}

// BriefAction is a deterministic next step with its command.
type BriefAction struct {
	Action  string `json:"action"`
	Why     string `json:"why"`
	Command string `json:"command"`
}

// Brief builds the brief of req on the context selection. It writes nothing
// (no injection events). Bad input is KindInvalid; storage failures
// KindInternal; AllRepos is as for Context.
func (pl *Pipeline) Brief(ctx context.Context, req BriefRequest) (Brief, error) {
	if err := pl.allowAllRepos(ctx, req.AllRepos); err != nil {
		return Brief{}, err
	}
	ctx = pl.Store.Pin(ctx) // one data version for the request's reads
	a, err := pl.assemble(ctx, ContextRequest{
		Query: req.Query, File: req.File, Language: req.Language, Field: req.Field, Intents: req.Intents, Tools: req.Tools,
		DaoTianLimit: req.DaoTianLimit, IncludeCandidates: req.IncludeCandidates, AllRepos: req.AllRepos,
		IncludeEvidence: true, DryRun: true, Budget: 1 << 30,
	})
	if err != nil {
		return Brief{}, err
	}
	p := &a.pack
	b := Brief{
		Query: p.Request.Query, KeyFacts: []BriefFact{}, Evidence: []BriefEvidence{}, Cards: []BriefCard{},
		Entities: []BriefEntity{}, Unresolved: []BriefCue{}, Uncertainty: []BriefSignal{}, NextActions: []BriefAction{},
		MemoryExists: p.MemoryExists, Policy: p.Policy,
	}
	// Cited evidence: a few per card, counterexamples always.
	cited := map[string]*BriefEvidence{}
	var order []string
	cite := func(evID, cardID, role string) {
		e, ok := cited[evID]
		if !ok {
			e = &BriefEvidence{ID: evID, CitedBy: []string{}, Roles: []string{}}
			cited[evID] = e
			order = append(order, evID)
		}
		e.CitedBy = appendNew(e.CitedBy, cardID)
		e.Roles = appendNew(e.Roles, role)
	}
	for i, it := range p.Items {
		n := 0
		for _, c := range it.Citations {
			if c.Role == domain.RoleCounterexample || n < briefCitationsPerCard && len(order) < briefMaxEvidence {
				cite(c.EvidenceID, it.ID, string(c.Role))
				n++
			}
		}
		bc := BriefCard{ID: it.ID, Tier: it.Tier, Status: it.Status, Statement: it.Statement, Anchor: it.Anchor, Lane: it.Lane,
			RenderForm: it.LaneForm, Salience: it.Salience, WhyApplies: it.WhyApplies, Citations: it.Citations,
			Evidence: a.items[i].roles, Contest: it.Contest}
		b.Cards = append(b.Cards, bc)
		if it.Contest != nil {
			// What contests the card is cited like its counterexamples.
			for _, c := range it.Contest.Citations {
				cite(c.EvidenceID, it.ID, string(c.Role))
			}
		}
		if it.Status.Authoritative() && it.Contest == nil {
			f := BriefFact{CardID: it.ID, Tier: it.Tier, Anchor: it.Anchor.Kind, Statement: it.Statement, Cites: []string{}}
			for _, c := range it.Citations[:min(len(it.Citations), briefCitationsPerCard)] {
				f.Cites = append(f.Cites, c.EvidenceID)
			}
			b.KeyFacts = append(b.KeyFacts, f)
		}
	}
	rows, err := pl.Store.EvidenceTexts(ctx, order)
	if err != nil {
		return Brief{}, hosterr.Internal(err, "brief: read cited evidence")
	}
	texts := []sourceText{}
	for _, it := range p.Items {
		texts = append(texts, sourceText{it.ID, it.Statement + "\n" + it.Content})
	}
	for _, id := range order {
		e := cited[id]
		if r, ok := rows[id]; ok {
			fillEvidence(e, r)
			texts = append(texts, sourceText{id, r.Content})
		}
		b.Evidence = append(b.Evidence, *e)
	}
	// Evidence the query matched that no briefed card cites.
	var matched []string
	for _, ev := range p.Evidence {
		if _, ok := cited[ev.ID]; ok {
			continue
		}
		e := &BriefEvidence{ID: ev.ID, CitedBy: []string{}, Roles: []string{}, Matched: true}
		fillEvidence(e, domain.Evidence{Field: ev.Field, Provenance: ev.Provenance, SourceRef: ev.SourceRef, Content: ev.Content})
		b.Evidence = append(b.Evidence, *e)
		texts = append(texts, sourceText{ev.ID, ev.Content})
		matched = append(matched, ev.ID)
	}
	citing, err := pl.Store.CitingCards(ctx, matched, domain.AuthoritativeStatuses())
	if err != nil {
		return Brief{}, hosterr.Internal(err, "brief: find citing cards")
	}
	var uncited []string
	for _, id := range matched {
		if len(citing[id]) == 0 {
			uncited = append(uncited, id)
		}
	}
	b.Entities = entities(texts, true)
	b.Unresolved = cues(texts, true)
	cands, err := pl.briefCandidates(ctx, a)
	if err != nil {
		return Brief{}, err
	}
	b.Uncertainty = briefUncertainty(a, b, uncited, cands)
	b.NextActions = briefActions(a, b, uncited, cands)
	b.Summary = briefSummary(a, b)
	return b, nil
}

// verb picks the singular or plural form for n.
func verb(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func appendNew(xs []string, x string) []string {
	if slices.Contains(xs, x) {
		return xs
	}
	return append(xs, x)
}

// maxExcerptRunes bounds an evidence excerpt in a brief.
const maxExcerptRunes = 280

func fillEvidence(e *BriefEvidence, r domain.Evidence) {
	e.Field, e.Provenance, e.SourceRef = r.Field, r.Provenance, r.SourceRef
	e.Excerpt, e.Truncated = excerpt(r.Content, maxExcerptRunes)
}

// excerpt folds whitespace and shortens s to at most n runes at a word
// boundary, saying whether it did; it folds no more of s than it keeps.
func excerpt(s string, n int) (string, bool) {
	s = oneLinePrefix(s, n+1)
	r := []rune(s)
	if len(r) <= n {
		return s, false
	}
	cut := string(r[:n])
	if i := strings.LastIndex(cut, " "); i > n/2 {
		cut = cut[:i]
	}
	return cut + " …", true
}

// oneLinePrefix is the first n runes of oneLine(s), or all of it.
func oneLinePrefix(s string, n int) string {
	var b strings.Builder
	runes := 0
	for f := range strings.FieldsSeq(s) {
		if runes > 0 {
			if runes == n {
				break
			}
			b.WriteByte(' ')
			runes++
		}
		for i := 0; i < len(f); {
			if runes == n {
				return b.String()
			}
			_, size := utf8.DecodeRuneInString(f[i:])
			b.WriteString(f[i : i+size])
			i += size
			runes++
		}
	}
	return b.String()
}

// briefCandidate is a candidate card the brief looked at for next actions.
type briefCandidate struct {
	card    domain.Card
	missing map[string]int
	allow   bool
}

// briefCandidates gates up to five candidate cards of the visible anchors
// (of the request's field, when it names one): the best matches of the
// query, or the first in fill order without one.
func (pl *Pipeline) briefCandidates(ctx context.Context, a *assembly) ([]briefCandidate, error) {
	q := store.CandidateQuery{AnchorIDs: pl.Loc.ChainIDs(), Statuses: []domain.Status{domain.StatusCandidate}, Now: store.FormatTime(a.now)}
	texts, err := pl.Store.CandidateTexts(ctx, q)
	if err != nil {
		return nil, hosterr.Internal(err, "brief: select candidates")
	}
	docs := make([]relevanceDoc, 0, len(texts))
	for _, t := range texts {
		docs = append(docs, relevanceDoc{id: t.ID, statement: t.Statement, content: t.Content})
	}
	var rel map[string]float64
	if terms := queryTerms(a.req.Query); len(terms) > 0 {
		rel = bm25Rank(a.req.Query, docs)
		texts = slices.DeleteFunc(texts, func(t store.CandidateText) bool { return rel[t.ID] <= 0 })
	}
	sortByFill(pl.Loc.ChainIDs(), texts, textFillKey)
	ids := make([]string, 0, len(texts))
	for _, t := range texts {
		ids = append(ids, t.ID)
	}
	if rel != nil {
		byRelevance(ids, func(id string) float64 { return rel[id] })
	}
	look := 5
	if a.pack.Request.Field != "" {
		look = 20 // some will be of other fields
	}
	ids = ids[:min(len(ids), look)]
	picked := make(map[string]bool, len(ids))
	for _, id := range ids {
		picked[id] = true
	}
	cards, err := pl.Store.CardsOf(ctx, slices.DeleteFunc(texts, func(t store.CandidateText) bool { return !picked[t.ID] }))
	if err != nil {
		return nil, hosterr.Internal(err, "brief: read candidates")
	}
	var keep []string
	for _, id := range ids {
		if c, ok := cards[id]; ok && (a.pack.Request.Field == "" || c.Field == a.pack.Request.Field) && len(keep) < 5 {
			keep = append(keep, id)
		}
	}
	links, err := pl.Store.LinksFor(ctx, keep)
	if err != nil {
		return nil, hosterr.Internal(err, "brief: read candidates")
	}
	out := make([]briefCandidate, 0, len(keep))
	for _, id := range keep {
		c := cards[id]
		allow, missing := pl.PromoteGate(ctx, c, links[id])
		out = append(out, briefCandidate{card: c, missing: missing, allow: allow})
	}
	return out, nil
}

func briefUncertainty(a *assembly, b Brief, uncited []string, cands []briefCandidate) []BriefSignal {
	out := []BriefSignal{}
	if len(b.KeyFacts) == 0 && contestedCards(b) == 0 {
		msg := "no authoritative card applies to this request"
		if a.pack.MemoryExists.Reason != "" {
			msg += ": " + a.pack.MemoryExists.Reason
		}
		var ids []string
		for _, c := range cands {
			ids = append(ids, c.card.ID)
		}
		if len(ids) > 0 {
			msg += fmt.Sprintf(" (%s %s, none promoted yet)", countNoun(len(ids), "candidate card"), verb(len(ids), "matches", "match"))
		}
		out = append(out, BriefSignal{"no_authoritative_card", msg, strlist.NonNil(ids)})
	}
	if len(uncited) > 0 {
		out = append(out, BriefSignal{"evidence_without_cards", fmt.Sprintf("%s %s the request but no authoritative card cites %s", countNoun(len(uncited), "evidence row"), verb(len(uncited), "matches", "match"), verb(len(uncited), "it", "them")), uncited})
	}
	for _, c := range b.Cards {
		if c.Contest != nil {
			out = append(out, BriefSignal{"contested", fmt.Sprintf("%s is contested (%s): do not apply it until a human demotes or resolves it", c.ID, c.Contest.Detail()), []string{c.ID}})
		}
		if n := c.Evidence.Counterexample; n > 0 {
			out = append(out, BriefSignal{"counterexample", fmt.Sprintf("%s has %s on record", c.ID, countNoun(n, "counterexample")), []string{c.ID}})
		}
	}
	stamp := store.FormatTime(a.now)
	for _, cand := range a.items {
		c := cand.card
		if cand.stale != nil && len(cand.stale.Citations) > 0 {
			out = append(out, BriefSignal{"stale", fmt.Sprintf("%s rests on code that changed: %s; re-verify it (palace verify %s) or demote it", c.ID, staleness.CodeReason(cand.stale), c.ID), []string{c.ID}})
		}
		if c.ReviewAfter != "" && c.ReviewAfter <= stamp {
			out = append(out, BriefSignal{"stale", fmt.Sprintf("%s was due for review %s", c.ID, c.ReviewAfter[:10]), []string{c.ID}})
		} else if cand.counts.Applied == 0 && cand.ageDays >= cardview.StaleDays {
			out = append(out, BriefSignal{"stale", fmt.Sprintf("%s has not been applied or changed in %d days", c.ID, cand.ageDays), []string{c.ID}})
		}
	}
	if n := a.pack.MemoryExists.Expired; n > 0 {
		out = append(out, BriefSignal{"stale", fmt.Sprintf("%s here expired and %s left out", countNoun(n, "authoritative card"), verb(n, "is", "are")), []string{}})
	}
	var conflicted []string
	for _, e := range b.Evidence {
		// A failure report a card cites in any role but counterexample
		// ("without WAL: database is locked") backs it, not a conflict.
		if hasConflictCue(e.Excerpt) && !slices.ContainsFunc(e.Roles, func(r string) bool { return r != string(domain.RoleCounterexample) }) {
			conflicted = append(conflicted, e.ID)
		}
	}
	if len(conflicted) > 0 {
		out = append(out, BriefSignal{"conflicting_evidence", fmt.Sprintf("%s %s contradiction or failure language", countNoun(len(conflicted), "evidence row"), verb(len(conflicted), "uses", "use")), conflicted})
	}
	return out
}

func briefActions(a *assembly, b Brief, uncited []string, cands []briefCandidate) []BriefAction {
	out := []BriefAction{}
	for _, s := range a.pack.DistillSuggestions {
		out = append(out, BriefAction{"distill", fmt.Sprintf("field %s has %s and no authoritative card", s.Field, countNoun(s.EvidenceCount, "evidence row")), s.Command})
	}
	for _, c := range cands {
		short := 0
		var role string
		for r, n := range c.missing {
			short += n
			role = r
		}
		switch {
		case c.allow:
			out = append(out, BriefAction{"promote", fmt.Sprintf("candidate %s passes its gate", c.card.ID),
				fmt.Sprintf("palace promote %s --reason \"…\"", c.card.ID)})
		case short == 1:
			out = append(out, BriefAction{"link", fmt.Sprintf("candidate %s's gate is one %s ref short", c.card.ID, role),
				fmt.Sprintf("palace card link %s --role %s --evidence EVIDENCE_ID", c.card.ID, role)})
		}
	}
	if len(uncited) > 0 {
		out = append(out, BriefAction{"distill", "evidence matches the request but no card cites it",
			fmt.Sprintf("palace distill --tier qi --statement \"…\" --supporting %s", strings.Join(uncited[:min(3, len(uncited))], ","))})
	}
	for _, s := range b.Uncertainty {
		switch s.Code {
		case "counterexample", "contested":
			// One review per card, named by the first reason for doubt.
			cmd := "palace card show " + s.IDs[0]
			if !slices.ContainsFunc(out, func(a BriefAction) bool { return a.Command == cmd }) {
				out = append(out, BriefAction{"review", s.Message, cmd})
			}
		case "stale":
			if len(s.IDs) == 1 {
				out = append(out, BriefAction{"review", s.Message, fmt.Sprintf("palace audit action %s --action set_review_after --value YYYY-MM-DD --reason \"…\"", s.IDs[0])})
			}
		}
	}
	if len(b.KeyFacts) == 0 && a.pack.MemoryExists.Evidence == 0 {
		field := cmp.Or(a.pack.Request.Field, "general")
		out = append(out, BriefAction{"record", "nothing is recorded here yet: record what you learn as you work",
			fmt.Sprintf("palace record --field %s --content \"…\" --source-ref …", cardview.ShellWord(field))})
	}
	return out
}

// contestedCards counts the briefed cards that are contested.
func contestedCards(b Brief) int {
	n := 0
	for _, c := range b.Cards {
		if c.Contest != nil {
			n++
		}
	}
	return n
}

func briefSummary(a *assembly, b Brief) string {
	what := "this location"
	if b.Query != "" {
		what = fmt.Sprintf("%q", b.Query)
	}
	if f := a.pack.Request.File; f != "" {
		what += " in " + f
	}
	lanes := map[domain.Lane]int{}
	var from []string
	for _, c := range b.Cards {
		lanes[c.Lane]++
		from = append(from, c.Anchor.Kind)
	}
	slices.Sort(from)
	from = slices.Compact(from)
	s := fmt.Sprintf("For %s: %s (core %d, scoped %d, references %d) %s", what, countNoun(len(b.KeyFacts), "authoritative card"),
		lanes[domain.LaneCore], lanes[domain.LaneScoped], lanes[domain.LaneRefOnly], verb(len(b.KeyFacts), "applies", "apply"))
	if n := contestedCards(b); n > 0 {
		s += fmt.Sprintf(" and %s %s contested (not to be applied until a human demotes or resolves %s)", countNoun(n, "card"), verb(n, "is", "are"), verb(n, "it", "them"))
	}
	if len(from) > 0 {
		s += " from the " + strings.Join(from, ", ") + " anchors"
	}
	s += fmt.Sprintf(", citing %s; %s, %s.", countNoun(len(b.Evidence), "evidence row"),
		countNoun(len(b.Uncertainty), "uncertainty signal"), countNoun(len(b.Unresolved), "unresolved item"))
	if len(b.KeyFacts) > 0 {
		s += " First fact: " + b.KeyFacts[0].Statement
	} else if b.MemoryExists.Reason != "" {
		s += " " + b.MemoryExists.Reason
	}
	return s
}
