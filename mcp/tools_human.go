package mcp

import (
	"context"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/audit"
)

// The human-only tools (HumanOnlyTools). Each is listed only in human
// mode; in agent mode a call is refused by modeGuard before it gets here,
// and host refuses the operation itself too: the floor does not depend on
// this package.

type promoteArgs struct {
	ID           string   `json:"id" jsonschema:"The card id (kc_…)."`
	Reason       string   `json:"reason" jsonschema:"Why the card is ready; kept in its audit trail."`
	Target       string   `json:"target,omitempty" jsonschema:"promoted or canonical. Defaults to canonical for dao_tian, promoted otherwise."`
	Reviewer     string   `json:"reviewer,omitempty" jsonschema:"The reviewer's name. Defaults to the OS user."`
	Verification []string `json:"verification,omitempty" jsonschema:"Ids of verification evidence to link first, in the same transaction."`
	AllowLocal   bool     `json:"allow_local_policy,omitempty" jsonschema:"Let a repo gate policy that git does not hold as committed (untracked or modified) decide; the event records it."`
}

func (s *Server) promoteTool() tool {
	return newTool(ToolPromote, "Promote a card (human)",
		`Human mode only. Promote a card through the gate: link the verification evidence given, evaluate the gate policy and the floors, and move the card to promoted or canonical, all in one transaction. A denial changes nothing and returns the gate's reasons.

Only call this when the human you work with has asked for this promotion.`,
		hints{}, map[string][]string{"target": {string(domain.StatusPromoted), string(domain.StatusCanonical)}},
		func(ctx context.Context, a promoteArgs) (output, error) {
			res, err := s.h.Promote(ctx, a.ID, host.PromoteRequest{Reason: a.Reason, Target: a.Target, Reviewer: a.Reviewer, Verification: a.Verification, AllowLocalPolicy: a.AllowLocal})
			return output{Value: res, Partial: res.Gate}, err
		}).returning(changeSchema())
}

type demoteArgs struct {
	ID             string   `json:"id" jsonschema:"The card id (kc_…)."`
	Reason         string   `json:"reason" jsonschema:"What the counterexample shows."`
	Counterexample []string `json:"counterexample" jsonschema:"Ids of the evidence that contradicts the card. At least one."`
	Target         string   `json:"target,omitempty" jsonschema:"demoted (the default) or retired."`
}

func (s *Server) demoteTool() tool {
	return newTool(ToolDemote, "Demote a card (human)",
		`Human mode only. Demote a card on counterexample evidence: link the counterexamples and move the card to demoted (or retired) in one transaction. The card stays in the audit trail.`,
		hints{destructive: true}, map[string][]string{"target": {string(domain.StatusDemoted), string(domain.StatusRetired)}},
		func(ctx context.Context, a demoteArgs) (output, error) {
			res, err := s.h.Demote(ctx, a.ID, host.DemoteRequest{Reason: a.Reason, Counterexample: a.Counterexample, Target: a.Target})
			return output{Value: res}, err
		}).returning(changeSchema())
}

type retireArgs struct {
	ID     string `json:"id" jsonschema:"The card id (kc_…)."`
	Reason string `json:"reason" jsonschema:"Why the card is retired."`
}

func (s *Server) retireTool() tool {
	return newTool(ToolRetire, "Retire a card (human)",
		`Human mode only. Retire a card that no longer holds: it leaves every context pack and can never become authoritative again, but it stays in the palace with its evidence and audit trail. Use palace_demote instead when evidence contradicts the card.`,
		hints{destructive: true}, nil,
		func(ctx context.Context, a retireArgs) (output, error) {
			res, err := s.h.Retire(ctx, a.ID, a.Reason)
			return output{Value: res}, err
		}).returning(changeSchema())
}

type publishArgs struct {
	ID         string `json:"id" jsonschema:"The card id (kc_…) of an authoritative card."`
	To         string `json:"to" jsonschema:"repo (from a worktree card) or global (from a repo card): one step outward."`
	Reason     string `json:"reason" jsonschema:"Why the card holds beyond its anchor."`
	Reviewer   string `json:"reviewer,omitempty" jsonschema:"The reviewer's name. Defaults to the OS user."`
	AllowLocal bool   `json:"allow_local_policy,omitempty" jsonschema:"Let a repo gate policy that git does not hold as committed (untracked or modified) decide; the event records it."`
}

func (s *Server) publishTool() tool {
	return newTool(ToolPublish, "Publish a card outward (human)",
		`Human mode only. Copy an authoritative card one anchor outward (worktree → repo → global) with its links and provenance; the original stays, stamped with the copy's id. The gate's publish action decides.`,
		hints{}, map[string][]string{"to": {"repo", "global"}},
		func(ctx context.Context, a publishArgs) (output, error) {
			res, err := s.h.Publish(ctx, a.ID, host.PublishRequest{To: a.To, Reason: a.Reason, Reviewer: a.Reviewer, AllowLocalPolicy: a.AllowLocal})
			return output{Value: res, Partial: res.Gate}, err
		}).returning(outputOf[host.PublishResult]("The published copy, the original and the gate's decision."))
}

type resolveArgs struct {
	ID           string   `json:"id" jsonschema:"The contested card's id (kc_…)."`
	Verification []string `json:"verification" jsonschema:"Ids of verification evidence newer than what contested the card; linked first, in the same transaction. At least one."`
	Reason       string   `json:"reason" jsonschema:"Why the newer verification outweighs the contradiction."`
	Reviewer     string   `json:"reviewer,omitempty" jsonschema:"The reviewer's name. Defaults to the OS user."`
	AllowLocal   bool     `json:"allow_local_policy,omitempty" jsonschema:"Let a repo gate policy that git does not hold as committed (untracked or modified) decide; the event records it."`
}

func (s *Server) resolveTool() tool {
	return newTool(ToolResolve, "Resolve a contested card (human)",
		`Human mode only. Answer a contest (a counterexample or a contradiction against an authoritative card) with newer verification: link the verification evidence given, ask the gate's resolve action (by default it needs verification recorded after what contested the card), and on allow close the contest so the card returns to its lanes. A denial changes nothing and returns the gate's reasons. When the contradiction holds, use palace_demote instead.

Only call this when the human you work with has asked for it.`,
		hints{}, nil,
		func(ctx context.Context, a resolveArgs) (output, error) {
			res, err := s.h.Resolve(ctx, a.ID, host.ResolveRequest{Verification: a.Verification, Reason: a.Reason, Reviewer: a.Reviewer, AllowLocalPolicy: a.AllowLocal})
			return output{Value: res, Partial: res.Gate}, err
		}).returning(changeSchema())
}

// changeSchema is the output schema of promote, demote and retire.
// It is built when a server starts, not at package initialization, which
// every palace process pays.
var changeSchema = sync.OnceValue(func() *jsonschema.Schema {
	return outputOf[host.ChangeResult]("The changed card, the event and the gate's decision.")
})

// auditActionArgs mirror `palace audit action`. (store.Scope is the value
// type host's request carries; mcp uses the type, never the store.)
type auditActionArgs struct {
	ID             string   `json:"id" jsonschema:"The card id (kc_…)."`
	Action         string   `json:"action" jsonschema:"rescope (new scope_paths/scope_languages/scope_fields, or value none for everywhere at its anchor), retrigger (new trigger_patterns/intents/tool_needs, or value none to clear them), revoke (retire it; reason required), set_expiry or set_review_after (value YYYY-MM-DD or none), mark_foundational, prefer_compact, set_persistence (value standard, protected or foundational), set_render_pref (value auto, inline_full, inline_compact or ref_preferred)."`
	Value          string   `json:"value,omitempty" jsonschema:"The new value, for the actions that take one."`
	Reason         string   `json:"reason,omitempty" jsonschema:"Why; kept in the card's audit trail. Required for revoke."`
	Anchor         string   `json:"anchor,omitempty" jsonschema:"rescope: the anchor kind the card lives at (only its own; widening goes through palace_publish)."`
	ScopePaths     []string `json:"scope_paths,omitempty" jsonschema:"rescope: path globs."`
	ScopeLanguages []string `json:"scope_languages,omitempty" jsonschema:"rescope: languages."`
	ScopeFields    []string `json:"scope_fields,omitempty" jsonschema:"rescope: fields."`
	Patterns       []string `json:"trigger_patterns,omitempty" jsonschema:"retrigger: regular expressions that wake the card on matching lines."`
	Intents        []string `json:"intents,omitempty" jsonschema:"retrigger: intents that wake the card."`
	ToolNeeds      []string `json:"tool_needs,omitempty" jsonschema:"retrigger: tools the card is about."`
}

func (s *Server) auditActionTool() tool {
	return newTool(ToolAuditAction, "Govern a card (human)",
		`Human mode only. Change how a card is governed, not what it says: rescope it, change its triggers, revoke it (retire it from every context, kept on record), set its expiry or review date, its persistence or render preference, or mark it foundational. Each action is one audited event. To say a card is wrong, use palace_demote with a counterexample instead.`,
		hints{destructive: true}, map[string][]string{"action": audit.Actions, "anchor": domain.Strings(domain.AnchorKinds)},
		func(ctx context.Context, a auditActionArgs) (output, error) {
			req := host.AuditActionRequest{Action: a.Action, Value: a.Value, Reason: a.Reason, Anchor: a.Anchor}
			// As the CLI: any scope list replaces the scope whole; rescope
			// with value none clears it.
			if a.ScopePaths != nil || a.ScopeLanguages != nil || a.ScopeFields != nil {
				req.Scope = &domain.Scope{Paths: a.ScopePaths, Languages: a.ScopeLanguages, Fields: a.ScopeFields}
			} else if a.Action == domain.AuditRescope && a.Value == "none" {
				req.Scope = &domain.Scope{}
			}
			if a.Patterns != nil || a.Intents != nil || a.ToolNeeds != nil {
				req.Trigger = &domain.Trigger{Patterns: a.Patterns, Intents: a.Intents, ToolNeeds: a.ToolNeeds}
			} else if a.Action == domain.AuditRetrigger && a.Value == "none" {
				req.Trigger = &domain.Trigger{}
			}
			res, err := s.h.AuditAction(ctx, a.ID, req)
			return output{Value: res}, err
		}).returning(outputOf[host.AuditActionResult]("The governed card and the event that changed it."))
}
