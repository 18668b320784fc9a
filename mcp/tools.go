package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/adoption"
	"github.com/palacehq/palace/host/gatekeep"
	"github.com/palacehq/palace/host/intake"
	"github.com/palacehq/palace/host/pack"
	"github.com/palacehq/palace/host/research"
	"github.com/palacehq/palace/internal/limits"
	"github.com/palacehq/palace/mailbox"
)

// Instructions is what the server tells a client in initialize: the short
// guide to using palace that clients put in front of the model.
const Instructions = `palace is this project's governed memory: evidence you record, knowledge cards distilled from it, and context packs assembled from the cards humans have promoted.

How to use it:
1. At the start of a task call palace_context (with the task as query, and the file you work on). Read the pack and follow it; it is what the team has verified. Call it again when you move to another file or subtask. Before a larger piece of work, palace_brief tells you what is known, from which evidence, and what is still open.
2. As you learn something worth keeping (a command that works, a failure and its cause, a user's correction), call palace_record with the evidence and where it came from (source_ref).
3. When evidence supports a reusable rule, call palace_distill to propose a candidate card citing the evidence ids, then palace_gate to see what a promotion would still need. When you re-check a candidate and it holds, record that and palace_link it as verification. Tell the user; do not try to promote.
4. Right after you use a card from the pack, find one does not fit, have to undo its advice, or need knowledge the pack did not give you, call palace_feedback (used, rejected, rollback, miss) with the pack's request_id and a one-line note: it is how the memory learns what helps.
5. When a tool, doc or expectation fails you, file a field report with palace_mailbox_file.

Never: promote, demote, retire or publish cards (humans do that); record text that palace gave you (context packs, briefs); put secrets in evidence or letters.`

// The tool names. Human-only tools are listed only in human mode.
const (
	ToolContext     = "palace_context"
	ToolBrief       = "palace_brief"
	ToolRecord      = "palace_record"
	ToolDistill     = "palace_distill"
	ToolGate        = "palace_gate"
	ToolCards       = "palace_cards"
	ToolMailboxFile = "palace_mailbox_file"
	ToolPromote     = "palace_promote"
	ToolDemote      = "palace_demote"
	ToolRetire      = "palace_retire"
	ToolPublish     = "palace_publish"
	ToolResolve     = "palace_resolve"
	ToolAuditAction = "palace_audit_action"
	// ToolLink adds evidence to an existing card.
	ToolLink = "palace_link"
	// ToolVerify records a verification of a card against the code as it is
	// now (palace verify).
	ToolVerify = "palace_verify"
	// The feedback-loop tools: adoption signals and research reports.
	ToolFeedback = "palace_feedback"
	ToolResearch = "palace_research"
)

// HumanOnlyTools are the tools only a human-mode server offers (a floor no policy lifts:
// agent mode cannot promote, demote, retire, publish or change a card's
// governance).
var HumanOnlyTools = []string{ToolPromote, ToolDemote, ToolRetire, ToolPublish, ToolResolve, ToolAuditAction}

// catalogue is every tool; New drops the human-only ones in agent mode.
// (tools/list orders them by name.)
func (s *Server) catalogue() []tool {
	return []tool{
		s.contextTool(), s.briefTool(), s.recordTool(), s.distillTool(), s.gateTool(), s.cardsTool(), s.linkTool(),
		s.verifyTool(), s.feedbackTool(), s.researchTool(), s.mailboxFileTool(),
		s.promoteTool(), s.demoteTool(), s.retireTool(), s.publishTool(), s.resolveTool(), s.auditActionTool(),
	}
}

type recordArgs struct {
	Content    string   `json:"content" jsonschema:"The evidence itself: what you saw, ran, read or were told (a command and its output, a failing test, a doc passage, a user's correction). Plain text, up to 1 MiB. Never a context pack or brief palace gave you."`
	Field      string   `json:"field,omitempty" jsonschema:"Topic the evidence belongs to, a free short string such as 'build', 'testing', 'db-migrations'. Defaults to 'general'. Reuse existing fields so evidence groups."`
	Domain     string   `json:"domain,omitempty" jsonschema:"What the evidence is about: project (this codebase), agent (how agents should work), skill (a general technique) or global. Defaults to project (global at the global anchor)."`
	Provenance string   `json:"provenance,omitempty" jsonschema:"How it was obtained: runtime (you observed it while working), research (read in docs or code) or human (written in human mode only: an agent records what a person told it as runtime and a human confirms it). Defaults to runtime in agent mode."`
	SourceRef  string   `json:"source_ref,omitempty" jsonschema:"Where it came from, so a human can check it: file:line, URL, command, test name, PR."`
	Tags       []string `json:"tags,omitempty" jsonschema:"Free tags."`
	Anchor     string   `json:"anchor,omitempty" jsonschema:"Where the evidence holds: worktree (this checkout, the default inside git), repo (every checkout of this repository; the default for research evidence) or global (everywhere; outside a git checkout it must be given, and the global anchor holds domain global only)."`
}

func (s *Server) recordTool() tool {
	return newTool(ToolRecord, "Record evidence",
		`Record one piece of raw evidence in palace's memory: something you observed, ran, read or were told while working. Evidence is append-only, never edited, and is what knowledge cards are distilled from. Call it as you learn, with source_ref saying where it came from; one fact per call reads best.

It never creates or changes a knowledge card and never changes what palace injects: only a card a human promotes does. Text that palace rendered for you (a context pack or brief) is refused, so memory never feeds on its own echo. Returns the evidence with its id (ev_…), which palace_distill cites.`,
		hints{}, map[string][]string{"domain": domain.Strings(domain.Domains), "provenance": domain.Strings(domain.Provenances), "anchor": domain.Strings(domain.AnchorKinds)},
		func(ctx context.Context, a recordArgs) (output, error) {
			ev, err := s.h.Intake().Record(ctx, intake.RecordRequest{Content: a.Content, Field: a.Field, Domain: a.Domain, Provenance: a.Provenance, SourceRef: a.SourceRef, Tags: a.Tags, Anchor: a.Anchor})
			return output{Value: ev}, err
		}).returning(outputOf[intake.Evidence]("The recorded evidence, with its id (ev_…)."))
}

type distillArgs struct {
	Statement      string   `json:"statement" jsonschema:"The card's wake-up form: one short, checkable sentence (at most 280 characters) an agent can act on."`
	Content        string   `json:"content,omitempty" jsonschema:"The longer form: rationale, boundaries, how to apply it."`
	Tier           string   `json:"tier" jsonschema:"qi (knowledge about one tool), shu (a method), dao_ren (a law of this domain) or dao_tian (a universal law). Choose the narrowest tier that fits."`
	Domain         string   `json:"domain,omitempty" jsonschema:"project, agent, skill or global. Defaults to project (global at the global anchor)."`
	Field          string   `json:"field,omitempty" jsonschema:"Topic, as in palace_record. Defaults to 'general'."`
	Anchor         string   `json:"anchor,omitempty" jsonschema:"worktree, repo or global. Defaults to the worktree inside git (dao_tian: global). Only dao_tian starts at global: publish other tiers outward. Outside a git checkout, global must be given."`
	Supporting     []string `json:"supporting" jsonschema:"Ids (ev_…) of evidence that supports the statement. At least one."`
	Verification   []string `json:"verification,omitempty" jsonschema:"Ids of evidence that verifies it (a passing test, a reproduced result)."`
	Teaching       []string `json:"teaching,omitempty" jsonschema:"Ids of evidence where a human taught it."`
	Counterexample []string `json:"counterexample,omitempty" jsonschema:"Ids of evidence that contradicts it. Any counterexample blocks promotion."`
	ScopePaths     []string `json:"scope_paths,omitempty" jsonschema:"Path globs (worktree-relative, ** allowed) the card applies to."`
	ScopeLanguages []string `json:"scope_languages,omitempty" jsonschema:"Languages the card applies to (go, python, typescript…)."`
	ScopeFields    []string `json:"scope_fields,omitempty" jsonschema:"Fields the card applies to."`
	TriggerPattern []string `json:"trigger_patterns,omitempty" jsonschema:"Regular expressions over code or text that wake the card."`
	Intents        []string `json:"intents,omitempty" jsonschema:"Intent tags that wake the card (refactor, debug, release…)."`
	ToolNeeds      []string `json:"tool_needs,omitempty" jsonschema:"Tools the card is about."`
	Persistence    string   `json:"persistence,omitempty" jsonschema:"standard (default), protected or foundational."`
	RenderPref     string   `json:"render_pref,omitempty" jsonschema:"auto (default), inline_full, inline_compact or ref_preferred."`
	ReviewAfter    string   `json:"review_after,omitempty" jsonschema:"Date after which the card should be reviewed, YYYY-MM-DD."`
	ExpiresAt      string   `json:"expires_at,omitempty" jsonschema:"Date the card stops applying, YYYY-MM-DD."`
	Reason         string   `json:"reason,omitempty" jsonschema:"Why you propose it; kept in the card's audit trail."`
	From           string   `json:"from,omitempty" jsonschema:"A card id (kc_…) the new card supersedes, to raise its tier or restate it: its evidence is cited too, and once the new card is promoted the old one is retired."`
	Direct         bool     `json:"direct,omitempty" jsonschema:"Human mode only: write the card straight to status, bypassing the gate (audited as direct_write)."`
	Status         string   `json:"status,omitempty" jsonschema:"With direct: promoted or canonical."`
}

func (s *Server) distillTool() tool {
	t := newTool(ToolDistill, "Distill a candidate card",
		`Propose a knowledge card from evidence: a short statement citing at least one supporting evidence id (from palace_record). The card starts as a candidate: it is not authoritative and is not injected into context by default. Only a human promotes it, through the gate.

After distilling, call palace_gate to see what a promotion would still need, and tell the user. A statement that already exists at the anchor is refused with the existing card's id: link more evidence to that card (palace_link) instead of duplicating it. A statement close to an existing one (a near-duplicate) is written, and near_duplicates names the existing cards: tell the user, and prefer linking evidence to the existing card when they say the same.`,
		hints{}, map[string][]string{"tier": domain.Strings(domain.Tiers), "domain": domain.Strings(domain.Domains), "anchor": domain.Strings(domain.AnchorKinds),
			"persistence": domain.Strings(domain.Persistences), "render_pref": domain.Strings(domain.RenderPrefs), "status": {string(domain.StatusPromoted), string(domain.StatusCanonical)}},
		func(ctx context.Context, a distillArgs) (output, error) {
			req := intake.DistillRequest{
				Statement: a.Statement, Content: a.Content, Tier: a.Tier, Domain: a.Domain, Field: a.Field, Anchor: a.Anchor,
				Supporting: a.Supporting, Verification: a.Verification, Teaching: a.Teaching, Counterexample: a.Counterexample,
				Persistence: a.Persistence, RenderPref: a.RenderPref, ReviewAfter: a.ReviewAfter, ExpiresAt: a.ExpiresAt,
				Direct: a.Direct, Status: a.Status, Reason: a.Reason, From: a.From,
			}
			req.Scope.Paths, req.Scope.Languages, req.Scope.Fields = a.ScopePaths, a.ScopeLanguages, a.ScopeFields
			req.Trigger.Patterns, req.Trigger.Intents, req.Trigger.ToolNeeds = a.TriggerPattern, a.Intents, a.ToolNeeds
			c, err := s.h.Distill(ctx, req)
			return output{Value: c}, err
		}).returning(outputOf[host.Card]("The new card, with its id (kc_…) and evidence links."))
	if s.h.Mode() == host.Agent {
		// An agent can never direct-write: host refuses it (with the CLI's
		// message) should an agent send direct anyway, and the schema an
		// agent reads does not offer it.
		hideProps(t, "direct", "status")
	}
	return t
}

type gateArgs struct {
	ID       string `json:"id" jsonschema:"The card id (kc_…)."`
	Target   string `json:"target,omitempty" jsonschema:"promoted or canonical. Defaults to canonical for dao_tian, promoted otherwise."`
	Reviewer string `json:"reviewer,omitempty" jsonschema:"Human mode: the reviewer's name (defaults to the OS user). In agent mode the reviewer is always the agent."`
}

func (s *Server) gateTool() tool {
	return newTool(ToolGate, "Ask the gate",
		`Ask the gate policy whether a card could be promoted now: allow, the reasons, and how much evidence of each role is missing. Read-only: it writes nothing and promotes nothing.

In agent mode the reviewer is you, an agent, so a gate that needs a human reviewer answers no by design. Use it after palace_distill to tell the user what a promotion would need.`,
		hints{readOnly: true}, map[string][]string{"target": {string(domain.StatusPromoted), string(domain.StatusCanonical)}},
		func(ctx context.Context, a gateArgs) (output, error) {
			res, err := s.h.Gate(ctx, a.ID, host.GateRequest{Target: a.Target, Reviewer: a.Reviewer})
			return output{Value: res}, err
		}).returning(outputOf[gatekeep.Result]("The gate's decision: allow, its reasons and the missing evidence per role."))
}

type cardsArgs struct {
	Action string `json:"action,omitempty" jsonschema:"list (the default): cards matching the filters; get: one card with its evidence links; events: one card's audit trail."`
	ID     string `json:"id,omitempty" jsonschema:"The card id (kc_…), for get and events."`
	Tier   string `json:"tier,omitempty" jsonschema:"list: only this tier."`
	Status string `json:"status,omitempty" jsonschema:"list: only this status."`
	Anchor string `json:"anchor,omitempty" jsonschema:"list: worktree, repo, global, or all (every anchor in the palace, other repositories included; needs all_repos). Defaults to every anchor visible from here."`
	Field  string `json:"field,omitempty" jsonschema:"list: only this field."`
	Limit  *int   `json:"limit,omitempty" jsonschema:"list: at most this many cards. Defaults to 50; 0 means no limit."`
	// AllRepos is the one explicit way to read other repositories' cards.
	AllRepos bool `json:"all_repos,omitempty" jsonschema:"Read across every repository of the palace: list every anchor, or get another repository's card. Off by default: a workspace sees its own worktree, repository and global cards. In agent mode only where a person allowed it for this checkout (palace workspace allow-all-repos), a tool error otherwise."`
}

// cardsList and cardsEvents are palace_cards' list and events results.
type cardsList struct {
	Cards []host.Card `json:"cards"`
	// Total counts every match, whatever the limit, as palace card list
	// --format json does.
	Total int `json:"total"`
}

type cardsEvents struct {
	CardID string         `json:"card_id"`
	Events []domain.Event `json:"events"`
}

// cardsOutput is palace_cards' output schema: one shape per action.
func cardsOutput() *jsonschema.Schema {
	return &jsonschema.Schema{
		Type:        "object",
		Description: "list: {cards, total} (total counts every match, whatever the limit); get: the card with its anchor and evidence links; events: {card_id, events}.",
		AnyOf:       []*jsonschema.Schema{outputOf[cardsList]("action list"), outputOf[host.Card]("action get"), outputOf[cardsEvents]("action events")},
	}
}

// DefaultCardLimit bounds palace_cards list unless the call says otherwise:
// a model's context is not the place for ten thousand cards.
const DefaultCardLimit = 50

func (s *Server) cardsTool() tool {
	return newTool(ToolCards, "Read knowledge cards",
		`Read knowledge cards. action list returns the cards matching the filters, dao_tian first; get returns one card with its anchor and evidence links; events returns a card's append-only audit trail (every change, by whom, why, and which policy allowed it). It changes no card; get counts as a view of the card (lane telemetry, as palace card show does), which keeps a card you fetch from a reference line warm.

Use palace_context, not this, to get the cards that apply to your task; use get for a card the pack listed as a reference.`,
		hints{}, map[string][]string{"action": {"list", "get", "events"}, "tier": domain.Strings(domain.Tiers), "status": domain.Strings(domain.Statuses),
			"anchor": append(append([]string{}, domain.Strings(domain.AnchorKinds)...), "all")},
		func(ctx context.Context, a cardsArgs) (output, error) {
			switch a.Action {
			case "", "list":
				if a.ID != "" {
					return output{}, invalidArg("id", "id is for get and events: list filters by tier, status, anchor and field")
				}
				limit := DefaultCardLimit
				if a.Limit != nil {
					limit = *a.Limit
				}
				if limit < 0 {
					return output{}, invalidArg("limit", "limit %d is negative: pass 0 for no limit", limit)
				}
				cards, total, err := s.h.ListCardsTotal(ctx, host.CardFilter{Tier: a.Tier, Status: a.Status, Anchor: a.Anchor, Field: a.Field, Limit: limit, AllRepos: a.AllRepos})
				if cards == nil {
					cards = []host.Card{}
				}
				return output{Value: cardsList{Cards: cards, Total: total}}, err
			case "get", "events":
				if a.ID == "" {
					return output{}, invalidArg("id", "id is required for action %s: the card id (kc_…)", a.Action)
				}
				if a.Tier != "" || a.Status != "" || a.Anchor != "" || a.Field != "" || a.Limit != nil {
					return output{}, invalidArg("action", "tier, status, anchor, field and limit filter action list; action %s takes only id", a.Action)
				}
				if a.Action == "get" {
					// Fetching a card's full text is a view: it warms the card's lane.
					c, err := s.h.ViewCard(ctx, a.ID, a.AllRepos)
					return output{Value: c}, err
				}
				evs, err := s.h.CardEvents(ctx, a.ID, a.AllRepos)
				return output{Value: cardsEvents{CardID: a.ID, Events: nonNil(evs)}}, err
			}
			return output{}, invalidArg("action", "action %q is not valid: use list, get or events", a.Action)
		}).returning(cardsOutput())
}

func invalidArg(field, format string, args ...any) error {
	return &host.Error{Kind: host.KindInvalid, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// hideProps removes properties from a tool's input schema.
func hideProps(t tool, names ...string) {
	schema := t.def.InputSchema.(*jsonschema.Schema)
	for _, n := range names {
		delete(schema.Properties, n)
		schema.PropertyOrder = slices.DeleteFunc(schema.PropertyOrder, func(p string) bool { return p == n })
		schema.Required = slices.DeleteFunc(schema.Required, func(p string) bool { return p == n })
	}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// contextArgs mirror the flags of `palace context`.
type contextArgs struct {
	Query             string   `json:"query,omitempty" jsonschema:"What you are about to do, in a few words (the task, the error, the API). Ranks the cards by relevance."`
	File              string   `json:"file,omitempty" jsonschema:"The file you work on, relative to the workspace or absolute. Cards scoped to paths and languages match it."`
	Language          string   `json:"language,omitempty" jsonschema:"Language id of the work (go, python, typescript…). Defaults to one derived from file."`
	Field             string   `json:"field,omitempty" jsonschema:"Knowledge field of the task (build, testing, storage…)."`
	Intents           []string `json:"intents,omitempty" jsonschema:"What you are doing: debug, refactor, test, release, review…; wakes cards with those intents."`
	Tools             []string `json:"tools,omitempty" jsonschema:"Tools you will use (git, make, psql…); wakes cards about them."`
	Instructions      []string `json:"instructions,omitempty" jsonschema:"Transient instructions for this request only (a user's constraint such as 'no markdown in the answer'): rendered first, never stored."`
	Budget            int      `json:"budget,omitempty" jsonschema:"Size limit of the rendered pack in characters. Absent or 0 means the default, 8000."`
	DaoTianLimit      *int     `json:"dao_tian_limit,omitempty" jsonschema:"At most this many dao_tian (universal law) items. Defaults to 1; 0 leaves them out."`
	IncludeEvidence   bool     `json:"include_evidence,omitempty" jsonschema:"Add up to five raw evidence rows matching the query."`
	IncludeCandidates bool     `json:"include_candidates,omitempty" jsonschema:"Let candidate (not yet promoted) cards compete too, labelled as not authoritative."`
	AllRepos          bool     `json:"all_repos,omitempty" jsonschema:"Also pull cards of every other repository, each labelled with its origin. Only when the user asks for cross-project knowledge; in agent mode only where a person allowed it for this checkout (palace workspace allow-all-repos), a tool error otherwise."`
	Explain           bool     `json:"explain,omitempty" jsonschema:"Add why-lines and salience breakdowns for skipped cards to the structured result."`
	DryRun            bool     `json:"dry_run,omitempty" jsonschema:"Write nothing: no lane telemetry. Use it to inspect, not when you will act on the pack."`
	RequestID         string   `json:"request_id,omitempty" jsonschema:"Fix the request id (tests and reproductions). Defaults to a new id."`
}

func (s *Server) contextTool() tool {
	return newTool(ToolContext, "Get the context pack",
		`Get palace's context pack for the task at hand: the authoritative knowledge cards that apply to this worktree, its repository and global memory (never another repository's unless all_repos), for the file and query you give, in lanes under a character budget, each card with its citations.

Call it at the start of every task, and again when you move to a different file or subtask. The text result is the Markdown to read and follow; the structured result adds the ids, citations, why each card applies, and what was trimmed. With no query, file, field, intent or tool (a session start) it returns the memory's wake-up layer: its laws, foundations and most valued cards. An empty pack says what memory exists and why none applied. Never record the pack back with palace_record. Unless dry_run, it logs which cards were shown (lane telemetry), nothing else.`,
		hints{}, nil,
		func(ctx context.Context, a contextArgs) (output, error) {
			pack, err := s.h.Pack().Context(ctx, pack.ContextRequest{Query: a.Query, File: a.File, Language: a.Language, Field: a.Field, Intents: a.Intents, Tools: a.Tools, Instructions: a.Instructions, Budget: a.Budget, DaoTianLimit: a.DaoTianLimit, IncludeEvidence: a.IncludeEvidence, IncludeCandidates: a.IncludeCandidates, AllRepos: a.AllRepos, Explain: a.Explain, DryRun: a.DryRun, RequestID: a.RequestID, Fetch: pack.FetchByMCPTool})
			return output{Value: pack, Text: pack.Rendered}, err
		}).returning(outputOf[pack.Pack]("The pack: rendered Markdown, its items with citations and why each applies, the selection and the budget."))
}

// briefArgs mirror the flags of `palace brief`.
type briefArgs struct {
	Query             string   `json:"query,omitempty" jsonschema:"What you need to know about, in a few words (a subsystem, an error, a decision)."`
	File              string   `json:"file,omitempty" jsonschema:"The file you work on, relative to the workspace or absolute."`
	Language          string   `json:"language,omitempty" jsonschema:"Language id of the work. Defaults to one derived from file."`
	Field             string   `json:"field,omitempty" jsonschema:"Knowledge field to brief (build, testing, storage…)."`
	Intents           []string `json:"intents,omitempty" jsonschema:"What you are doing: debug, refactor, test, release, review…"`
	Tools             []string `json:"tools,omitempty" jsonschema:"Tools you will use."`
	DaoTianLimit      *int     `json:"dao_tian_limit,omitempty" jsonschema:"At most this many dao_tian cards. Defaults to 1; 0 leaves them out."`
	IncludeCandidates bool     `json:"include_candidates,omitempty" jsonschema:"Brief candidate cards too (never as key facts)."`
	AllRepos          bool     `json:"all_repos,omitempty" jsonschema:"Include every repository's cards, labelled. Only when the user asks for cross-project knowledge; in agent mode only where a person allowed it for this checkout (palace workspace allow-all-repos), a tool error otherwise."`
}

func (s *Server) briefTool() tool {
	return newTool(ToolBrief, "Get a cited brief",
		`Get a deterministic, cited brief of what palace knows about a topic here: a summary, key facts from authoritative cards with the evidence they cite, the cards with their citations, entities (commands, paths, URLs, identifiers) and unresolved items found in that evidence, reasons for doubt (counterexamples, candidates, expiring cards), and next actions with their commands. No LLM is involved: every line comes from recorded evidence or cards.

Call it before a larger piece of work or when palace_context's pack is not enough to decide; it reads more than a pack and writes nothing. Never record the brief back with palace_record.`,
		hints{readOnly: true}, nil,
		func(ctx context.Context, a briefArgs) (output, error) {
			b, err := s.h.Pack().Brief(ctx, pack.BriefRequest{Query: a.Query, File: a.File, Language: a.Language, Field: a.Field, Intents: a.Intents, Tools: a.Tools, DaoTianLimit: a.DaoTianLimit, IncludeCandidates: a.IncludeCandidates, AllRepos: a.AllRepos})
			return output{Value: b}, err
		}).returning(outputOf[pack.Brief]("The brief: key facts, next actions and what memory exists."))
}

type linkArgs struct {
	ID         string `json:"id" jsonschema:"The card id (kc_…) to add evidence to."`
	Role       string `json:"role" jsonschema:"What the evidence does for the card: supporting (it backs the claim), verification (you re-checked the claim and it held), teaching (a human taught it) or counterexample (it contradicts or limits the claim)."`
	EvidenceID string `json:"evidence_id" jsonschema:"The evidence id (ev_…) from palace_record. Links point at evidence only, never at cards."`
	Note       string `json:"note,omitempty" jsonschema:"A short note on why this evidence plays this role."`
}

func (s *Server) linkTool() tool {
	return newTool(ToolLink, "Link evidence to a card",
		`Link recorded evidence to an existing knowledge card in a role. Use it when you verify a candidate card (role verification), find more support for it (supporting), or find a case where it does not hold (counterexample) — then palace_gate tells whether the card now meets its gate.

It never changes a card's status: only a human promotes or demotes. Linking the same evidence in the same role twice changes nothing. Record the evidence first with palace_record.`,
		hints{idempotent: true}, map[string][]string{"role": domain.Strings(domain.Roles)},
		func(ctx context.Context, a linkArgs) (output, error) {
			res, err := s.h.Link(ctx, a.ID, host.LinkRequest{Role: a.Role, EvidenceID: a.EvidenceID, Note: a.Note})
			return output{Value: res}, err
		}).returning(outputOf[host.LinkResult]("The link and the card's evidence counts."))
}

type verifyArgs struct {
	ID       string   `json:"id" jsonschema:"The card id (kc_…) to verify against the code."`
	Evidence []string `json:"evidence,omitempty" jsonschema:"Evidence ids (ev_…) whose cited code to verify against instead of the card's own citations: evidence you recorded (palace_record with source_ref path#L10-L24) where the code moved to."`
	Note     string   `json:"note,omitempty" jsonschema:"What you checked, one line."`
}

func (s *Server) verifyTool() tool {
	return newTool(ToolVerify, "Verify a card against the code",
		`Re-check a card against the code it cites, as that code is now. Use it when a context pack marks a card stale (the code its evidence cites changed): read the code, and when the card still holds, call this. palace records what the code says now as verification evidence and links it, so the card is fresh again; moved lines and renamed files are followed.

It never changes a card's status. When the cited code is gone (a deleted file, removed lines), it fails naming it: record evidence citing where the code is now and pass its id in evidence, or tell the user the card may need demoting.`,
		hints{idempotent: true}, nil,
		func(ctx context.Context, a verifyArgs) (output, error) {
			res, err := s.h.Verify(ctx, a.ID, host.VerifyRequest{Evidence: a.Evidence, Note: a.Note})
			return output{Value: res}, err
		}).returning(outputOf[host.VerifyResult]("The verification recorded and the card after it."))
}

type feedbackArgs struct {
	Signal        string `json:"signal" jsonschema:"used: a card from the pack helped and you acted on it. accepted: the user accepted work that followed it. rejected: it did not fit this task (say why in note). rollback: advice from it had to be undone. miss: you needed knowledge the pack did not give (note says what). contradiction: what you saw contradicts the card (evidence_id: the evidence you recorded). neutral: seen, made no difference."`
	CardID        string `json:"card_id,omitempty" jsonschema:"The card (kc_…) the signal is about, from the pack's items. Required except for a miss; for a miss, the card that should have been in the pack, if you found one."`
	RequestID     string `json:"request_id,omitempty" jsonschema:"The pack's request_id (rq_…): the signal then counts for requests like that one. Always pass it when the signal follows a pack."`
	Note          string `json:"note,omitempty" jsonschema:"One sentence on what happened: why it was rejected, what you needed, what contradicted it."`
	Query         string `json:"query,omitempty" jsonschema:"What you asked for or needed, when there is no request_id."`
	Field         string `json:"field,omitempty" jsonschema:"The topic, for a miss that names no card. Defaults to the card's or the request's field."`
	EvidenceID    string `json:"evidence_id,omitempty" jsonschema:"For a contradiction: the id (ev_…) of the evidence you recorded with palace_record that contradicts the card."`
	AllowWarnings bool   `json:"allow_warnings,omitempty" jsonschema:"Record even when the check finds the signal thin (no note, no request). Prefer adding the note."`
	CheckOnly     bool   `json:"check_only,omitempty" jsonschema:"Only check the signal; write nothing."`
}

func (s *Server) feedbackTool() tool {
	return newTool(ToolFeedback, "Say how a card or pack worked",
		`Tell palace what happened after a context pack, so the memory learns from use. Call it right after you used a card from the pack (used), when one did not fit your task (rejected, with a note), when advice from one had to be undone (rollback), when the user accepted work that followed it (accepted), when what you saw contradicts it (contradiction, with the evidence you recorded), or when you needed knowledge the pack did not give you (miss, with a note saying what). Pass the pack's request_id.

Signals are evidence, not authority: they never change a card's status or count toward a gate. used and accepted make the card rank higher for requests like this one, rejected and rollback lower (never out of the pack's inline lanes when the request is about the card); misses and contradictions go to the humans' review queue, and a contradiction contests the card only with the evidence_id of what you recorded. Name cards and evidence of this checkout only. A signal counts once per card and request (repeating it changes nothing). A signal that says nothing (no note, no request) is refused unless allow_warnings.`,
		hints{}, map[string][]string{"signal": adoption.Signals},
		func(ctx context.Context, a feedbackArgs) (output, error) {
			res, err := s.h.Adoption().Adopt(ctx, adoption.Request{Signal: a.Signal, CardID: a.CardID, RequestID: a.RequestID, Note: a.Note, Query: a.Query, Field: a.Field, EvidenceID: a.EvidenceID, AllowWarnings: a.AllowWarnings, CheckOnly: a.CheckOnly})
			return output{Value: res, Partial: res}, err
		})
}

type researchArgs struct {
	Action string          `json:"action" jsonschema:"validate: check the report against the contract. plan: what an ingest would write (dry run). ingest: write one evidence row per new finding (allowed in agent mode only when the team's palace.research policy allows it)."`
	Report json.RawMessage `json:"report,omitempty" jsonschema:"The report as a JSON object: report_id, title, sources [{id, url, title}], findings [{id, content, source, field}], optional candidate_insights [{statement, tier, field, findings}] and about (project or general). Give report or file."`
	File   string          `json:"file,omitempty" jsonschema:"Path of a report file (JSON), relative to the server's directory. Give report or file."`
	Anchor string          `json:"anchor,omitempty" jsonschema:"repo (the default), worktree or global (global only for a report whose about is general)."`
}

func (s *Server) researchTool() tool {
	return newTool(ToolResearch, "Validate or ingest a research report",
		`Bring external research into palace as evidence, never as knowledge: each finding of a report becomes one research evidence row citing its source, with a stable id (ingesting the same report again writes nothing). validate checks the report; plan returns the planned evidence ids and the report's candidate insights as palace_distill suggestions citing them, writing nothing; ingest writes. Errors name the JSON path at fault (findings[3].source).

Research never creates or promotes a card: distill a suggestion with palace_distill if it holds, and a human promotes it. By default an agent may validate and plan; ingest is for humans unless the team's palace.research policy allows agents.`,
		hints{}, map[string][]string{"action": {"validate", "plan", "ingest"}, "anchor": domain.Strings(domain.AnchorKinds)},
		func(ctx context.Context, a researchArgs) (output, error) {
			var b []byte
			name := "report"
			switch {
			case len(a.Report) > 0 && a.File != "":
				return output{}, invalidArg("report", "give report or file, not both")
			case len(a.Report) > 0:
				b = a.Report
			case a.File != "":
				p := a.File
				if !filepath.IsAbs(p) {
					p = filepath.Join(s.h.Location().Dir, p)
				}
				var err error
				if b, err = limits.ReadInputFile("file", p, research.MaxReportBytes); err != nil {
					return output{}, err
				}
				name = a.File
			default:
				return output{}, invalidArg("report", "report or file is required: the report JSON object, or the path of its file")
			}
			plan, err := s.h.Research(ctx, research.Request{Report: b, Name: name, Action: a.Action, Anchor: a.Anchor})
			return output{Value: plan, Partial: plan}, err
		})
}

// mailboxFileArgs are a letter's fields but ts, which the
// server stamps.
type mailboxFileArgs struct {
	Class    string   `json:"class" jsonschema:"What kind of report: tool_error, missing_doc, wrong_doc, unexpected_behavior, feature_request, question… (a short snake_case word)."`
	What     string   `json:"what" jsonschema:"What happened, in one or two sentences a maintainer can act on."`
	Repo     string   `json:"repo,omitempty" jsonschema:"The project the letter is about: a path or a remote such as github.com/org/name. Omit for a letter about no project (it goes to the global box)."`
	Tool     string   `json:"tool,omitempty" jsonschema:"The tool or command involved."`
	Expected string   `json:"expected,omitempty" jsonschema:"What you expected instead."`
	Snippet  string   `json:"snippet,omitempty" jsonschema:"A short excerpt: the error message, the command line. Never a secret."`
	Kind     string   `json:"kind,omitempty" jsonschema:"triage or receipt closes the letters listed in answers; any other value is a plain reply. Leave it out for a new report."`
	Answers  []string `json:"answers,omitempty" jsonschema:"Ids (12 hex characters) of the letters this one replies to."`
	External string   `json:"external,omitempty" jsonschema:"Where the report is tracked outside palace (an issue URL, a ticket id); marks it external."`
	Agent    string   `json:"agent,omitempty" jsonschema:"Who writes the letter. Defaults to this server's agent name ($PALACE_AGENT)."`
}

func (s *Server) mailboxFileTool() tool {
	return newTool(ToolMailboxFile, "File a field report",
		`File a field report (a letter) in palace's mailbox when something in your environment fails you: a tool that errors, a doc that is missing or wrong, a behaviour that contradicts what you were told. The letter is appended to the spool and later distributed to the named project's box, where humans triage it.

The letter is scanned for secrets first: one that contains a secret is refused and nothing is written. Filing never changes memory (evidence or cards); use palace_record for what you learned. Returns the letter's id.`,
		hints{}, nil,
		func(ctx context.Context, a mailboxFileArgs) (output, error) {
			l := mailbox.Letter{Agent: a.Agent, Class: a.Class, What: a.What, Repo: a.Repo, Tool: a.Tool,
				Expected: a.Expected, Snippet: a.Snippet, Kind: a.Kind, Answers: a.Answers}
			if a.External != "" {
				l.External = mailbox.External{Set: true, Ref: a.External}
			}
			filed, err := s.h.Mail().File(ctx, l)
			return output{Value: filed}, err
		}).returning(outputOf[mailbox.Filed]("The filed letter's id and where it waits."))
}
