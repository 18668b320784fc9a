// Package audit is the authority audit: every authoritative card of the
// chosen anchors with its lane, render form, salience, counts and dates, and
// the warnings and actions that follow (Actions). It only reads: an action
// is carried out by host's AuditAction; host imports audit.
package audit

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/cardview"
	"github.com/palacehq/palace/host/jobenv"
	"github.com/palacehq/palace/host/pack"
	"github.com/palacehq/palace/host/staleness"
	"github.com/palacehq/palace/internal/hosterr"
	"github.com/palacehq/palace/policies"
	"github.com/palacehq/palace/store"
)

// Audit thresholds.
const (
	// auditTrimCooling and auditSkipCooling are the 30-day counts from which
	// a card is flagged as cooling.
	auditTrimCooling = 4
	auditSkipCooling = 6
	// auditIdleDays is how long a card may go without being applied or
	// changed before it is flagged idle.
	auditIdleDays = cardview.StaleDays
	// auditNeverAppliedDays is how old a never-applied card must be to be flagged.
	auditNeverAppliedDays = 30
	// auditFoundationalApplied is the 30-day applied count from which a
	// standard card is suggested for foundational.
	auditFoundationalApplied = 10
)

// Warnings are the warning codes an audit row may carry.
var Warnings = []string{"contested", "stale", "overbroad_scope", "cooling", "idle", "review_due", "expired", "never_applied", "conflict", "contradicted", "turned_down"}

// Actions are the governed actions of `palace audit action`.
var Actions = domain.AuditActions

// Config is what the audit needs of the palace it reads. Every field is
// required.
type Config struct {
	jobenv.Env
	// AnchorIDs are the anchors a listing reads (see Filter.Anchor).
	AnchorIDs func(kind string, allRepos bool) ([]string, error)
	// Held is told the anchors audited before the rows are computed; its
	// error fails the audit.
	Held func(ctx context.Context, anchorIDs []string) error
	// OpenContests are the open contests of cards, by card id.
	OpenContests func(ctx context.Context, ids []string) (map[string][]store.Contest, error)
	// PolicySet is the policy set in force and its hash.
	PolicySet func(ctx context.Context) (*policies.Set, string, error)
	// AnchorRef names an anchor in output.
	AnchorRef func(ctx context.Context, id string) cardview.AnchorRef
	// StampFileState fills in how git sees the policy file that decided.
	StampFileState func(ctx context.Context, d *policies.Decision)
	// Stale checks the code the cards of this checkout cite, and their
	// review and expiry dates: the stale ones, by id.
	Stale func(ctx context.Context, cards []domain.Card) (map[string]*staleness.Stale, error)
}

// Auditor audits one palace from one workspace.
type Auditor struct{ cfg Config }

func New(cfg Config) *Auditor { return &Auditor{cfg: cfg} }

// Filter selects the rows of Audit. Empty fields match all.
type Filter struct {
	// Lane is core, scoped, ref_only or inspector_only.
	Lane string `json:"lane,omitempty"`
	// Anchor is worktree, repo, global, "" (every anchor visible from here)
	// or "all" (every anchor of the palace, which needs AllRepos).
	Anchor string `json:"anchor,omitempty"`
	// AllRepos audits every repository's cards.
	AllRepos bool   `json:"all_repos,omitempty"`
	Tier     string `json:"tier,omitempty"`
	Warning  string `json:"warning,omitempty"`
}

// Report is the authority audit: every authoritative card with where
// it would land and why.
type Report struct {
	AsOf string `json:"as_of"`
	// Audited counts the authoritative cards examined before the lane and
	// warning filters; Lanes counts them per lane.
	Audited  int                 `json:"audited"`
	Lanes    map[domain.Lane]int `json:"lanes"`
	Warnings map[string]int      `json:"warnings"`
	Rows     []Row               `json:"rows"`
	// Stale are the rows' cards whose cited code changed or whose dates
	// passed, each with its repairs.
	Stale       []StaleCard       `json:"stale"`
	ScopePolicy policies.Decision `json:"scope_policy"`
	LanesPolicy policies.Decision `json:"lanes_policy"`
}

// Row is one card of the audit, with lane, render form and salience where
// it fits best (bestFit), so a row shows what cooling alone did to it.
type Row struct {
	ID                string                `json:"id"`
	Statement         string                `json:"statement"`
	Tier              domain.Tier           `json:"tier"`
	Status            domain.Status         `json:"status"`
	Anchor            cardview.AnchorRef    `json:"anchor"`
	Field             string                `json:"field"`
	Persistence       domain.Persistence    `json:"persistence"`
	RenderPref        domain.RenderPref     `json:"render_pref"`
	Scope             domain.Scope          `json:"scope"`
	FitContext        policies.ScopeContext `json:"fit_context"`
	Lane              domain.Lane           `json:"lane"`
	RenderForm        domain.RenderForm     `json:"render_form"`
	Salience          int                   `json:"salience"`
	SalienceBreakdown map[string]int        `json:"salience_breakdown"`
	WhyApplies        []string              `json:"why_applies"`
	Counts30d         policies.Counts30d    `json:"counts_30d"`
	AppliedEver       int                   `json:"applied_ever"`
	AgeDays           int                   `json:"age_days"`
	// LastOutcome is the newest injection outcome in the last 30 days.
	LastOutcome string            `json:"last_outcome,omitempty"`
	LastSeen    string            `json:"last_seen,omitempty"`
	ReviewAfter string            `json:"review_after,omitempty"`
	ExpiresAt   string            `json:"expires_at,omitempty"`
	Evidence    domain.RoleCounts `json:"evidence"`
	Warnings    []Warning         `json:"warnings"`
	Suggested   []Suggestion      `json:"suggested_actions"`
	// Signals30d counts the card's adoption signals of the last 30 days,
	// from any request; nil when it has none.
	Signals30d map[string]int `json:"signals_30d,omitempty"`
	// Contest is set when the card is contested (such rows come first).
	Contest *cardview.ItemContest `json:"contest,omitempty"`
	// Stale is set when the code the card's evidence saw changed, or its
	// review date or expiry passed.
	Stale *staleness.Stale `json:"stale,omitempty"`
}

// StaleCard is one card of the audit's stale section.
type StaleCard struct {
	ID        string             `json:"id"`
	Statement string             `json:"statement"`
	Tier      domain.Tier        `json:"tier"`
	Anchor    cardview.AnchorRef `json:"anchor"`
	// Stale says what changed: each cited file and the change, or the
	// date that passed.
	Stale *staleness.Stale `json:"stale"`
	// Repair are the actions that clear it.
	Repair []Suggestion `json:"repair"`
}

// Warning is one finding about a card.
type Warning struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Suggestion is an action the audit proposes, with the command.
type Suggestion struct {
	Action  string `json:"action"`
	Why     string `json:"why"`
	Command string `json:"command"`
}

// auditRelevance is the relevance the audit lanes every card with: that of
// a request just relevant to the card, so cooling still shows.
const auditRelevance = 0.3

// Audit lists the authoritative cards of the chosen anchors with their
// standing, warnings and suggested actions. It reads only; both modes.
// Unknown filter values are KindInvalid.
func (a *Auditor) Audit(ctx context.Context, f Filter) (Report, error) {
	sf := store.CardFilter{Statuses: domain.AuthoritativeStatuses()}
	if f.Tier != "" {
		if err := hosterr.OneOf("tier", domain.Tier(f.Tier), domain.Tiers); err != nil {
			return Report{}, err
		}
		sf.Tiers = []domain.Tier{domain.Tier(f.Tier)}
	}
	if f.Lane != "" {
		if err := hosterr.OneOf("lane", f.Lane, []string{string(domain.LaneCore), string(domain.LaneScoped), string(domain.LaneRefOnly), string(domain.LaneInspectorOnly)}); err != nil {
			return Report{}, err
		}
	}
	if f.Warning != "" {
		if err := hosterr.OneOf("warning", f.Warning, Warnings); err != nil {
			return Report{}, err
		}
	}
	ids, err := a.cfg.AnchorIDs(f.Anchor, f.AllRepos)
	if err != nil {
		return Report{}, err
	}
	sf.AnchorIDs = ids
	cards, err := a.cfg.Store.ListCards(ctx, sf)
	if err != nil {
		return Report{}, hosterr.Internal(err, "audit: list cards")
	}
	if err := a.cfg.Held(ctx, sf.AnchorIDs); err != nil {
		return Report{}, err
	}
	now := a.cfg.Now()
	rep := Report{AsOf: store.FormatTime(now), Audited: len(cards), Lanes: map[domain.Lane]int{}, Warnings: map[string]int{}, Rows: []Row{}, Stale: []StaleCard{}}
	for _, l := range domain.Lanes {
		rep.Lanes[l] = 0
	}
	if len(cards) == 0 {
		return rep, nil
	}
	rows, err := a.rows(ctx, cards, now, &rep)
	if err != nil {
		return Report{}, err
	}
	for _, r := range rows {
		rep.Lanes[r.Lane]++
		for _, w := range r.Warnings {
			rep.Warnings[w.Code]++
		}
		if f.Lane != "" && r.Lane != domain.Lane(f.Lane) {
			continue
		}
		if f.Warning != "" && !slices.ContainsFunc(r.Warnings, func(w Warning) bool { return w.Code == f.Warning }) {
			continue
		}
		rep.Rows = append(rep.Rows, r)
		if r.Stale != nil {
			rep.Stale = append(rep.Stale, StaleCard{ID: r.ID, Statement: r.Statement, Tier: r.Tier, Anchor: r.Anchor, Stale: r.Stale, Repair: staleRepair(r.ID, r.Stale)})
		}
	}
	return rep, nil
}

// staleRepair are the actions that clear a card's staleness: re-verify or
// demote for changed code, a new date or retirement for a date.
func staleRepair(id string, st *staleness.Stale) []Suggestion {
	var out []Suggestion
	if len(st.Citations) > 0 {
		out = append(out,
			Suggestion{Action: "verify", Why: "the card still holds for the code as it is now: record a verification against it",
				Command: "palace verify " + id},
			Suggestion{Action: string(domain.ActionDemote), Why: "the change contradicts the card",
				Command: "palace demote " + id + " --counterexample EV --reason \"…\""})
	}
	if st.Expired != "" {
		out = append(out, Suggestion{Action: domain.AuditSetExpiry, Why: "extend the expiry if it still holds", Command: auditCommand(id, domain.AuditSetExpiry)},
			Suggestion{Action: domain.AuditRevoke, Why: "retire it if it no longer holds", Command: auditCommand(id, domain.AuditRevoke)})
	} else if st.ReviewDue != "" {
		out = append(out, Suggestion{Action: domain.AuditSetReviewAfter, Why: "confirm it still holds and set the next review date", Command: auditCommand(id, domain.AuditSetReviewAfter)})
	}
	return out
}

// auditCard is one audited card with what the policies said of it.
type auditCard struct {
	card    domain.Card
	anchor  cardview.AnchorRef
	scope   policies.ScopeResult
	lane    policies.LaneResult
	counts  policies.Counts30d
	ageDays int
}

// auditRows computes the rows of cards, in lane, tier, anchor, salience, id order.
func (a *Auditor) rows(ctx context.Context, cards []domain.Card, now time.Time, rep *Report) ([]Row, error) {
	ids := make([]string, len(cards))
	for i, c := range cards {
		ids[i] = c.ID
	}
	window, err := a.cfg.Store.InjectionStats(ctx, ids, store.FormatTime(now.Add(-cardview.CoolingWindow)))
	if err != nil {
		return nil, hosterr.Internal(err, "audit: read injection events")
	}
	ever, err := a.cfg.Store.InjectionStats(ctx, ids, "")
	if err != nil {
		return nil, hosterr.Internal(err, "audit: read injection events")
	}
	signals, err := a.cardSignalEvents(ctx, ids, now)
	if err != nil {
		return nil, err
	}
	roles, err := a.cfg.Store.LinkRoleCounts(ctx, ids)
	if err != nil {
		return nil, hosterr.Internal(err, "audit: count links")
	}
	contests, err := a.cfg.OpenContests(ctx, ids)
	if err != nil {
		return nil, err
	}
	stale, err := a.cfg.Stale(ctx, cards)
	if err != nil {
		return nil, err
	}
	set, _, err := a.cfg.PolicySet(ctx)
	if err != nil {
		return nil, err
	}
	// Scope: one batch per distinct best-fit context.
	cands := make([]*auditCard, len(cards))
	groups := map[string][]int{}
	var keys []string
	fits := make([]policies.ScopeContext, len(cards))
	refs := map[string]cardview.AnchorRef{}
	for i, c := range cards {
		ref, ok := refs[c.AnchorID]
		if !ok {
			ref = a.cfg.AnchorRef(ctx, c.AnchorID)
			refs[c.AnchorID] = ref
		}
		cands[i] = &auditCard{card: c, anchor: ref}
		fits[i] = bestFit(c, a.cfg.Loc.ChainIDs())
		k := fmt.Sprintf("%q", []any{fits[i].File, fits[i].Language, fits[i].Field, fits[i].Intents, fits[i].Tools})
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], i)
	}
	for _, k := range keys {
		idx := groups[k]
		in := policies.ScopeInput{Context: fits[idx[0]], Cards: make([]policies.ScopeCard, len(idx))}
		for j, i := range idx {
			in.Cards[j] = cardview.ScopeCard(cards[i], cands[i].anchor.Kind)
			in.Cards[j].Relevance = auditRelevance
		}
		out, d := set.Scope(ctx, in)
		rep.ScopePolicy = d
		for _, i := range idx {
			cands[i].scope = out[cards[i].ID]
		}
	}
	lin := policies.LanesInput{Cards: make([]policies.LanesCard, len(cards)), Config: set.LanesConfig()}
	for i, c := range cands {
		c.counts, c.ageDays = pack.Cooling(window[c.card.ID], ever[c.card.ID], c.card, now)
		lin.Cards[i] = policies.LanesCard{
			Card: policies.LanesCardInfo{ID: c.card.ID, Tier: string(c.card.Tier), Status: string(c.card.Status), Persistence: string(c.card.Persistence),
				RenderPref: string(c.card.RenderPref), Anchor: c.anchor.Kind, Field: c.card.Field},
			ScopeFit: c.scope.ScopeFit, OperationFit: c.scope.OperationFit, Relevance: auditRelevance,
			Counts30d: c.counts, AgeDays: c.ageDays,
		}
	}
	lout, ld := set.Lanes(ctx, lin)
	rep.LanesPolicy = ld
	a.cfg.StampFileState(ctx, &rep.ScopePolicy)
	a.cfg.StampFileState(ctx, &rep.LanesPolicy)
	dupes := map[string][]domain.Card{}
	for _, c := range cards {
		dupes[c.StatementNorm] = append(dupes[c.StatementNorm], c)
	}
	rows := make([]Row, len(cards))
	for i, c := range cands {
		c.lane = lout[c.card.ID]
		r := Row{
			ID: c.card.ID, Statement: c.card.Statement, Tier: c.card.Tier, Status: c.card.Status, Anchor: c.anchor,
			Field: c.card.Field, Persistence: c.card.Persistence, RenderPref: c.card.RenderPref, Scope: c.card.Scope,
			FitContext: fits[i], Lane: c.lane.Lane, RenderForm: c.lane.RenderForm, Salience: c.lane.Salience,
			SalienceBreakdown: c.lane.Breakdown, WhyApplies: nonNilStrings(c.scope.Why), Counts30d: c.counts,
			AgeDays: c.ageDays, ReviewAfter: c.card.ReviewAfter, ExpiresAt: c.card.ExpiresAt,
			Evidence: roles[c.card.ID],
		}
		if !c.scope.Applies {
			r.Lane, r.RenderForm = domain.LaneInspectorOnly, domain.FormInspectorOnly
		}
		e := ever[c.card.ID]
		r.AppliedEver = e.Counts[string(domain.OutcomeInlineFull)] + e.Counts[string(domain.OutcomeInlineCompact)]
		for outcome, at := range window[c.card.ID].Latest {
			if at > r.LastSeen || at == r.LastSeen && outcome < r.LastOutcome {
				r.LastSeen, r.LastOutcome = at, outcome
			}
		}
		r.Warnings, r.Suggested = auditFindings(c, r, dupes[c.card.StatementNorm], now)
		r.Signals30d = signalCountsOf(signals[c.card.ID])
		w, s := contradictionFindings(c.card, signals[c.card.ID])
		w2, s2 := turnedDownFindings(c.card, r.Signals30d)
		r.Warnings, r.Suggested = append(append(r.Warnings, w...), w2...), append(append(r.Suggested, s...), s2...)
		if cs := contests[c.card.ID]; len(cs) > 0 {
			ic := cardview.ContestOf(cs)
			r.Contest = ic
			if r.Lane == domain.LaneCore || r.Lane == domain.LaneScoped {
				r.Lane, r.RenderForm = domain.LaneRefOnly, domain.FormRefOnly
			}
			r.Warnings = append([]Warning{{"contested", fmt.Sprintf("contested since %s (%s); context shows it as a reference with a warning, never inline", ic.Since, ic.Detail())}}, r.Warnings...)
			r.Suggested = append([]Suggestion{
				{Action: string(domain.ActionDemote), Why: "the contradiction holds", Command: "palace demote " + c.card.ID + " --counterexample EV --reason \"…\""},
				{Action: string(domain.ActionResolve), Why: "newer verification outweighs the contradiction (the gate decides)", Command: "palace resolve " + c.card.ID + " --verification EV --reason \"…\""},
			}, r.Suggested...)
		}
		if st := stale[c.card.ID]; st != nil {
			r.Stale = st
			// A passed date has its own warning (review_due, expired).
			if len(st.Citations) > 0 {
				code := &staleness.Stale{Citations: st.Citations, Reason: st.Reason}
				r.Warnings = append([]Warning{{"stale", "the code it cites changed: " + staleness.CodeReason(code)}}, r.Warnings...)
				r.Suggested = append(staleRepair(c.card.ID, code), r.Suggested...)
			}
		}
		rows[i] = r
	}
	slices.SortStableFunc(rows, func(x, y Row) int {
		// Contested cards first: each waits for a human.
		if cx, cy := x.Contest != nil, y.Contest != nil; cx != cy {
			if cx {
				return -1
			}
			return 1
		}
		return cmp.Or(cardview.LaneOrder(x.Lane)-cardview.LaneOrder(y.Lane), x.Tier.Rank()-y.Tier.Rank(),
			y.Salience-x.Salience, strings.Compare(x.ID, y.ID))
	})
	return rows, nil
}

// bestFit is the request a card fits best: a file its first path glob
// matches, its first language, its first scope field (else its own field),
// and every trigger intent and tool need.
func bestFit(c domain.Card, anchors []string) policies.ScopeContext {
	fit := policies.ScopeContext{Field: c.Field, Intents: nonNilStrings(c.Trigger.Intents), Tools: nonNilStrings(c.Trigger.ToolNeeds), Anchors: anchors}
	if len(c.Scope.Paths) > 0 {
		fit.File = globExample(c.Scope.Paths[0])
	}
	if len(c.Scope.Languages) > 0 {
		fit.Language = strings.ToLower(c.Scope.Languages[0])
	}
	if len(c.Scope.Fields) > 0 {
		fit.Field = c.Scope.Fields[0]
	}
	return fit
}

// globExample is a path the glob matches: each wildcard becomes "x".
func globExample(glob string) string {
	r := strings.NewReplacer("**", "x", "*", "x", "?", "x")
	return r.Replace(glob)
}

// auditFindings derives a row's warnings and suggested actions.
func auditFindings(c *auditCard, r Row, same []domain.Card, now time.Time) ([]Warning, []Suggestion) {
	warn := []Warning{}
	suggest := map[string]string{}
	stamp := store.FormatTime(now)
	unscoped := len(c.card.Scope.Paths)+len(c.card.Scope.Languages)+len(c.card.Scope.Fields) == 0
	cooling := r.Counts30d.Trimmed >= auditTrimCooling || r.Counts30d.Skipped >= auditSkipCooling
	// An unscoped card fits every request a little and none well: unless
	// persistence lifts it, it stays out of the inline lanes.
	if unscoped && (cooling || r.Lane == domain.LaneRefOnly || r.Lane == domain.LaneInspectorOnly) {
		warn = append(warn, Warning{"overbroad_scope", fmt.Sprintf("no scope (applies everywhere) and even a request in its own field lands it in %s: it is rarely injected inline", r.Lane)})
		suggest[domain.AuditRescope] = "limit it to the paths, languages or fields where it matters"
	}
	if cooling {
		warn = append(warn, Warning{"cooling", fmt.Sprintf("trimmed %d and skipped %d times in 30 days: its lane cooled to %s (salience %d)", r.Counts30d.Trimmed, r.Counts30d.Skipped, r.Lane, r.Salience)})
		if r.Counts30d.Trimmed >= auditTrimCooling && c.card.RenderPref != domain.RenderInlineCompact {
			suggest[domain.AuditPreferCompact] = "a compact form fits budgets that keep trimming it"
		}
		if !unscoped {
			suggest[domain.AuditRescope] = "narrow its scope to where it is actually used"
		}
	}
	if c.card.ReviewAfter != "" && c.card.ReviewAfter <= stamp {
		warn = append(warn, Warning{"review_due", "review was due " + c.card.ReviewAfter})
		suggest[domain.AuditSetReviewAfter] = "confirm it still holds and set the next review date"
	}
	if c.card.ExpiresAt != "" && c.card.ExpiresAt <= stamp {
		warn = append(warn, Warning{"expired", "expired " + c.card.ExpiresAt + "; context leaves it out"})
		suggest[domain.AuditSetExpiry] = "extend the expiry if it still holds"
		suggest[domain.AuditRevoke] = "retire it if it no longer holds"
	}
	if r.Counts30d.Applied == 0 && r.AgeDays >= auditIdleDays {
		warn = append(warn, Warning{"idle", fmt.Sprintf("neither applied nor changed in %d days", r.AgeDays)})
		suggest[domain.AuditSetReviewAfter] = "confirm it still holds and set the next review date"
		suggest[domain.AuditRevoke] = "retire it if it no longer holds"
	}
	if age := cardview.DaysSince(c.card.CreatedAt, now); r.AppliedEver == 0 && age >= auditNeverAppliedDays {
		warn = append(warn, Warning{"never_applied", fmt.Sprintf("never injected inline in the %d days since it was created", age)})
		suggest[domain.AuditRescope] = "give it a scope and triggers that match the requests it is for"
	}
	if n := r.Evidence.Counterexample; n > 0 {
		warn = append(warn, Warning{"conflict", fmt.Sprintf("%d counterexample evidence on record while authoritative", n)})
		suggest[domain.AuditRevoke] = "retire it, or demote it with `palace demote` if the counterexample holds"
	}
	for _, o := range same {
		if o.ID != c.card.ID && o.OriginCard != c.card.ID && c.card.OriginCard != o.ID {
			warn = append(warn, Warning{"conflict", fmt.Sprintf("%s states the same (%s anchor copy not made by publish)", o.ID, o.AnchorID)})
			suggest[domain.AuditRevoke] = "keep one of the duplicates"
			break
		}
	}
	if r.Counts30d.Applied >= auditFoundationalApplied && c.card.Persistence == "standard" {
		suggest[domain.AuditMarkFoundational] = fmt.Sprintf("applied %d times in 30 days: keep it in core", r.Counts30d.Applied)
	}
	var out []Suggestion
	for _, a := range Actions {
		if why, ok := suggest[a]; ok {
			out = append(out, Suggestion{Action: a, Why: why, Command: auditCommand(c.card.ID, a)})
		}
	}
	if out == nil {
		out = []Suggestion{}
	}
	return warn, out
}

func auditCommand(id, action string) string {
	base := "palace audit action " + id + " --action " + action
	switch action {
	case domain.AuditRescope:
		return base + " --scope-path GLOB --scope-lang LANG --reason \"…\""
	case domain.AuditSetExpiry, domain.AuditSetReviewAfter:
		return base + " --value YYYY-MM-DD --reason \"…\""
	case domain.AuditSetPersistence:
		return base + " --value protected --reason \"…\""
	case domain.AuditSetRenderPref:
		return base + " --value inline_compact --reason \"…\""
	}
	return base + " --reason \"…\""
}

// nonNilStrings is xs, or an empty list for nil (JSON [] rather than null).
func nonNilStrings(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}
