package pack

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/cardview"
	"github.com/palacehq/palace/host/staleness"
	"github.com/palacehq/palace/internal/hosterr"
	"github.com/palacehq/palace/internal/strlist"
	"github.com/palacehq/palace/policies"
	"github.com/palacehq/palace/store"
)

// Context assembly defaults.
const (
	// DefaultBudget is a pack's character budget when the request names none.
	DefaultBudget = 8000
	// DefaultDaoTianLimit is how many dao_tian items a pack holds by default.
	DefaultDaoTianLimit = 1
	// CandidateLimit bounds the cards one request's policies consider.
	CandidateLimit = 200
	// MaxInstructions and MaxInstructionRunes bound transient instructions.
	MaxInstructions     = 16
	MaxInstructionRunes = 2000
	// DistillMinEvidence is how much evidence a field needs, with no
	// authoritative card, before a pack suggests distilling it.
	DistillMinEvidence = 5
	// evidenceLimit bounds the evidence rows --include-evidence adds.
	evidenceLimit = 5
)

// ContextRequest asks for a context pack. The JSON names mirror the CLI
// flags of `palace context`; the zero value asks for the default pack of
// the host's location.
type ContextRequest struct {
	// Query ranks the visible cards by relevance; cards that do not match
	// still compete on scope and salience.
	Query string `json:"query,omitempty"`
	// File is the path the agent works on (absolute, or relative to the
	// host's directory); scope policies match it worktree-relative.
	File string `json:"file,omitempty"`
	// Language is an editor language id; defaults to File's extension's.
	Language string   `json:"language,omitempty"`
	Field    string   `json:"field,omitempty"`
	Intents  []string `json:"intents,omitempty"`
	Tools    []string `json:"tools,omitempty"`
	// Instructions are transient: rendered first, never stored, never trimmed.
	Instructions []string `json:"instructions,omitempty"`
	// Budget is the size limit in characters of Rendered (DefaultBudget).
	Budget int `json:"budget,omitempty"`
	// DaoTianLimit caps dao_tian items; nil means DefaultDaoTianLimit, 0 none.
	DaoTianLimit *int `json:"dao_tian_limit,omitempty"`
	// IncludeEvidence adds up to evidenceLimit evidence rows of the visible
	// anchors (addEvidence); they pack after the cards and are trimmed first.
	IncludeEvidence bool `json:"include_evidence,omitempty"`
	// IncludeCandidates lets candidate cards compete too (labelled as such);
	// demoted and retired cards never do.
	IncludeCandidates bool `json:"include_candidates,omitempty"`
	// AllRepos drops the no-leak filter: cards of every anchor compete, each
	// labelled with its origin, and the rendering groups them by origin.
	AllRepos bool `json:"all_repos,omitempty"`
	// Explain adds why-lines and salience breakdowns to skipped cards.
	Explain bool `json:"explain,omitempty"`
	// Fetch is how the reader of Rendered fetches a card it names: the CLI
	// command (the default) or, for an agent over MCP, the palace_cards tool.
	Fetch CardFetch `json:"-"`
	// DryRun writes nothing, and names no request unless RequestID does.
	DryRun bool `json:"dry_run,omitempty"`
	// RequestID names the request's telemetry record; defaults to a new
	// "rq_" id (none with DryRun).
	RequestID string `json:"request_id,omitempty"`
}

// Pack is a context pack: what an agent injects, with everything needed to
// explain it. Same database, same request and same clock give the same pack,
// byte for byte.
type Pack struct {
	RequestID string      `json:"request_id,omitempty"`
	DryRun    bool        `json:"dry_run"`
	Request   PackRequest `json:"request"`
	// Anchors are the anchors the pack could draw from, innermost first
	// (with all_repos, the local chain; other anchors show up on items).
	Anchors               []cardview.AnchorRef `json:"anchors"`
	AllRepos              bool                 `json:"all_repos"`
	TransientInstructions []string             `json:"transient_instructions"`
	Sections              []Section            `json:"sections"`
	// Items are the cards the pack renders or trimmed for budget, in pack order.
	Items []Item `json:"items"`
	// Evidence are the raw evidence rows of --include-evidence.
	Evidence []EvidenceItem `json:"evidence,omitempty"`
	// Skipped are considered cards left out: out of scope, cooled to
	// inspector_only, over the dao_tian limit, or duplicates.
	Skipped            []SkippedCard       `json:"skipped"`
	Selection          Selection           `json:"selection"`
	MemoryExists       MemoryExists        `json:"memory_exists"`
	DistillSuggestions []DistillSuggestion `json:"distill_suggestions"`
	Budget             BudgetUse           `json:"budget"`
	Policy             PackPolicy          `json:"policy"`
	// Rendered is the exact Markdown an agent injects.
	Rendered string `json:"rendered"`
}

// PackRequest is the request as the host understood it, defaults applied.
type PackRequest struct {
	Query             string   `json:"query,omitempty"`
	File              string   `json:"file,omitempty"`
	Language          string   `json:"language,omitempty"`
	Field             string   `json:"field,omitempty"`
	Intents           []string `json:"intents"`
	Tools             []string `json:"tools"`
	Budget            int      `json:"budget"`
	DaoTianLimit      int      `json:"dao_tian_limit"`
	IncludeEvidence   bool     `json:"include_evidence"`
	IncludeCandidates bool     `json:"include_candidates"`
	// Wake is set when the request names no task (no query words, file,
	// language, field, intent or tool): the pack holds the foundational
	// layer, ranked by standing (policies.LanesInput.Wake).
	Wake bool `json:"wake"`
}

// Section is one typed section of Rendered.
type Section struct {
	// Name is transient_instructions, core, scoped, references or evidence.
	Name  string `json:"name"`
	Title string `json:"title"`
	// Origin is set on the sections of another repository (all_repos).
	Origin *cardview.AnchorRef `json:"origin,omitempty"`
	IDs    []string            `json:"ids"`
	Chars  int                 `json:"chars"`
}

// Item is one card of a pack.
type Item struct {
	ID        string             `json:"id"`
	Statement string             `json:"statement"`
	Content   string             `json:"content,omitempty"`
	Tier      domain.Tier        `json:"tier"`
	Status    domain.Status      `json:"status"`
	Domain    domain.Domain      `json:"domain"`
	Field     string             `json:"field"`
	Anchor    cardview.AnchorRef `json:"anchor"`
	// Foreign marks a card of another repository or worktree (all_repos only).
	Foreign     bool               `json:"foreign,omitempty"`
	Persistence domain.Persistence `json:"persistence"`
	RenderPref  domain.RenderPref  `json:"render_pref"`
	Lane        domain.Lane        `json:"lane"`
	// LaneForm is the render form the lanes policy chose; RenderForm is the
	// form after budget packing (inspector_only when dropped).
	LaneForm          domain.RenderForm `json:"lane_form"`
	RenderForm        domain.RenderForm `json:"render_form"`
	Salience          int               `json:"salience"`
	SalienceBreakdown map[string]int    `json:"salience_breakdown"`
	WhyApplies        []string          `json:"why_applies"`
	// Citations are up to 8 of the card's evidence links, every
	// counterexample first; CitationCount counts all of them.
	Citations     []cardview.Citation `json:"citations"`
	CitationCount int                 `json:"citation_count"`
	Counts30d     policies.Counts30d  `json:"counts_30d"`
	AgeDays       int                 `json:"age_days"`
	Relevance     float64             `json:"relevance"`
	// Contest is set when the card is contested: it is a reference with
	// this warning, never inline, until resolved or demoted.
	Contest *cardview.ItemContest `json:"contest,omitempty"`
	// Stale is set when the code the card's evidence saw changed, or a
	// date passed: it renders with this warning and loses StalePenalty.
	Stale *staleness.Stale `json:"stale,omitempty"`
	// NearDuplicateOf names the inlined card this one nearly repeats
	// (dedupeNear); this one is then a reference line.
	NearDuplicateOf string `json:"near_duplicate_of,omitempty"`
	// Trimmed says what the budget did to the item, when it did anything.
	Trimmed *BudgetAction `json:"trimmed,omitempty"`
	// Chars is the item's size in Rendered (0 when not rendered).
	Chars int `json:"chars"`
}

// BudgetAction records how the budget reduced an item, and why.
type BudgetAction struct {
	From   domain.RenderForm `json:"from"`
	To     domain.RenderForm `json:"to"`
	Reason string            `json:"reason"`
}

// EvidenceItem is an evidence row of a pack.
type EvidenceItem struct {
	ID         string             `json:"id"`
	Field      string             `json:"field"`
	Provenance domain.Provenance  `json:"provenance"`
	SourceRef  string             `json:"source_ref"`
	Anchor     cardview.AnchorRef `json:"anchor"`
	Content    string             `json:"content"`
	RenderForm domain.RenderForm  `json:"render_form"`
	Trimmed    *BudgetAction      `json:"trimmed,omitempty"`
	Chars      int                `json:"chars"`
}

// SkippedCard is a considered card the pack leaves out.
type SkippedCard struct {
	ID     string      `json:"id"`
	Tier   domain.Tier `json:"tier"`
	Anchor string      `json:"anchor"`
	// Reason is skipped_scope, skipped_cooled (cooling kept it out),
	// not_relevant (the request is not about it), not_in_wake (a request
	// with no task, and the card is not of the wake-up layer), lane_limit,
	// dao_tian_limit or duplicate.
	Reason      string      `json:"reason"`
	DuplicateOf string      `json:"duplicate_of,omitempty"`
	Lane        domain.Lane `json:"lane,omitempty"`
	Salience    int         `json:"salience,omitempty"`
	// Relevance is the card's relevance to the request, 0..1.
	Relevance float64 `json:"relevance,omitempty"`
	// Why and SalienceBreakdown are filled with Explain only.
	Why               []string       `json:"why,omitempty"`
	SalienceBreakdown map[string]int `json:"salience_breakdown,omitempty"`
}

// Selection lists the ids of a pack by where they ended up.
type Selection struct {
	// TotalCandidates counts every card the SQL selection matched;
	// Considered is how many (at most CandidateLimit) the policies saw.
	TotalCandidates       int      `json:"total_candidates"`
	Considered            int      `json:"considered"`
	CandidateLimit        int      `json:"candidate_limit"`
	InlineCoreIDs         []string `json:"inline_core_ids"`
	InlineScopedIDs       []string `json:"inline_scoped_ids"`
	RefOnlyIDs            []string `json:"ref_only_ids"`
	InspectorOnlyIDs      []string `json:"inspector_only_ids"`
	TrimmedDueToBudgetIDs []string `json:"trimmed_due_to_budget_ids"`
}

// MemoryExists says what memory exists where the pack looked, so an empty
// pack never claims absence falsely.
type MemoryExists struct {
	// Cards counts every card at the visible anchors, any status.
	Cards         int            `json:"cards"`
	ByStatus      map[string]int `json:"by_status"`
	Authoritative int            `json:"authoritative"`
	// Expired counts authoritative cards left out because they expired.
	Expired  int `json:"expired"`
	Evidence int `json:"evidence"`
	// Applies counts considered cards the scope policy let through.
	Applies  int `json:"applies"`
	Rendered int `json:"rendered"`
	// Elsewhere counts, without naming, memory at anchors this request may
	// not see; only when the pack renders no card.
	Elsewhere *MemoryElsewhere `json:"elsewhere,omitempty"`
	// Reason says why nothing was selected; empty when something was.
	Reason string `json:"reason,omitempty"`
}

// MemoryElsewhere counts memory at other repositories and worktrees.
type MemoryElsewhere struct {
	Cards    int `json:"cards"`
	Evidence int `json:"evidence"`
}

// DistillSuggestion is a field with evidence and no authoritative card.
type DistillSuggestion struct {
	Field         string   `json:"field"`
	EvidenceCount int      `json:"evidence_count"`
	SampleIDs     []string `json:"sample_evidence_ids"`
	SuggestedTier string   `json:"suggested_tier"`
	Command       string   `json:"command"`
}

// BudgetUse is the budget and what the rendering used of it.
type BudgetUse struct {
	Limit     int  `json:"limit"`
	Used      int  `json:"used"`
	Remaining int  `json:"remaining"`
	Over      bool `json:"over"`
	// OverflowReason says why Used exceeds Limit (items are never cut).
	OverflowReason string `json:"overflow_reason,omitempty"`
}

// PackPolicy names the policies that decided, by hash.
type PackPolicy struct {
	SetHash string            `json:"set_hash"`
	Scope   policies.Decision `json:"scope"`
	Lanes   policies.Decision `json:"lanes"`
	// Fallback says why the embedded defaults decided, when they did.
	Fallback string `json:"fallback,omitempty"`
}

// Context assembles the context pack for req without the write lock and,
// unless DryRun, queues its request record (the counts that cool cards).
// Bad input is KindInvalid and writes nothing; storage failures are
// KindInternal; a policy set that fails to load never fails the request (the
// embedded defaults decide, Pack.Policy says so); an AllRepos the host has
// not allowed fails with Config.CrossRepoRead's error before any read.
func (pl *Pipeline) Context(ctx context.Context, req ContextRequest) (Pack, error) {
	if err := pl.allowAllRepos(ctx, req.AllRepos); err != nil {
		return Pack{}, err
	}
	ctx = pl.Store.Pin(ctx) // one data version for the request's reads
	a, err := pl.assemble(ctx, req)
	if err != nil {
		return Pack{}, err
	}
	if !req.DryRun {
		if err := pl.logInjections(ctx, a); err != nil {
			return Pack{}, err
		}
	}
	pl.Remember(a.pack.Rendered)
	return a.pack, nil
}

// normalizeContext validates req and applies defaults.
func (pl *Pipeline) normalizeContext(req ContextRequest) (ContextRequest, PackRequest, error) {
	if req.Budget < 0 {
		return req, PackRequest{}, hosterr.Invalid("budget", "--budget %d is negative: pass a size in characters (default %d)", req.Budget, DefaultBudget)
	}
	if req.Budget == 0 {
		req.Budget = DefaultBudget
	}
	limit := DefaultDaoTianLimit
	if req.DaoTianLimit != nil {
		if *req.DaoTianLimit < 0 {
			return req, PackRequest{}, hosterr.Invalid("dao_tian_limit", "--dao-tian-limit %d is negative: pass 0 to leave dao_tian out", *req.DaoTianLimit)
		}
		limit = *req.DaoTianLimit
	}
	if len(req.Instructions) > MaxInstructions {
		return req, PackRequest{}, hosterr.Invalid("instruction", "%d transient instructions, over %d: merge them", len(req.Instructions), MaxInstructions)
	}
	var instr []string
	for i, s := range req.Instructions {
		s = strings.TrimSpace(s)
		switch {
		case s == "":
			continue
		case !utf8.ValidString(s):
			return req, PackRequest{}, hosterr.Invalid("instruction", "transient instruction %d is not valid UTF-8", i+1)
		case utf8.RuneCountInString(s) > MaxInstructionRunes:
			return req, PackRequest{}, hosterr.Invalid("instruction", "transient instruction %d is %d characters, over %d: keep it short", i+1, utf8.RuneCountInString(s), MaxInstructionRunes)
		}
		instr = append(instr, s)
	}
	req.Instructions = instr
	req.Field = strings.TrimSpace(req.Field)
	if err := pl.checkFileCheckout(req.File); err != nil {
		return req, PackRequest{}, err
	}
	file, lang := pl.requestFile(req.File)
	if req.Language == "" {
		req.Language = lang
	}
	pr := PackRequest{
		Query: strings.TrimSpace(req.Query), File: file, Language: strings.ToLower(req.Language), Field: req.Field,
		Intents: strlist.Clean(req.Intents), Tools: strlist.Clean(req.Tools), Budget: req.Budget, DaoTianLimit: limit,
		IncludeEvidence: req.IncludeEvidence, IncludeCandidates: req.IncludeCandidates,
	}
	pr.Wake = len(tokenTerms(pr.Query)) == 0 && pr.File == "" && pr.Language == "" && pr.Field == "" && len(pr.Intents) == 0 && len(pr.Tools) == 0
	return req, pr, nil
}

// PolicySet returns the set in force, or the embedded defaults with a note
// saying why when that set fails to load: a pack is never refused for a
// policy failure. Only the defaults failing to compile is KindInternal.
func (pl *Pipeline) PolicySet(ctx context.Context) (*policies.Set, string, error) {
	set, err := pl.Policies(ctx)
	if err == nil {
		return set, "", nil
	}
	def, derr := embeddedDefaults()
	if derr != nil {
		return nil, "", hosterr.Internal(derr, "load the embedded default policies")
	}
	return def, fmt.Sprintf("the policy set failed to load, the embedded defaults decided: %v", err), nil
}

func (pl *Pipeline) requestID(req ContextRequest) string {
	if req.RequestID != "" || req.DryRun {
		return req.RequestID
	}
	return store.NewID("rq_", pl.Now())
}
