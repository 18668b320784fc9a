package mcp

import (
	"context"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/audit"
)

func init() {
	extraTools = append(extraTools, func(s *Server) []tool { return []tool{s.auditActionTool()} })
}

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
