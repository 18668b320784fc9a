package mcp

import (
	"context"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
)

func init() {
	extraTools = append(extraTools, func(s *Server) []tool { return []tool{s.auditActionTool()} })
}

// auditActionArgs mirror `palace audit action`. (store.Scope is the value
// type host's request carries; mcp uses the type, never the store.)
type auditActionArgs struct {
	ID             string   `json:"id" jsonschema:"The card id (kc_…)."`
	Action         string   `json:"action" jsonschema:"rescope (new scope_paths/scope_languages/scope_fields, or value none for everywhere at its anchor), revoke (retire it; reason required), set_expiry or set_review_after (value YYYY-MM-DD or none), mark_foundational, prefer_compact, set_persistence (value standard, protected or foundational), set_render_pref (value auto, inline_full, inline_compact or ref_preferred)."`
	Value          string   `json:"value,omitempty" jsonschema:"The new value, for the actions that take one."`
	Reason         string   `json:"reason,omitempty" jsonschema:"Why; kept in the card's audit trail. Required for revoke."`
	Anchor         string   `json:"anchor,omitempty" jsonschema:"rescope: the anchor kind the card lives at (only its own; widening goes through palace_publish)."`
	ScopePaths     []string `json:"scope_paths,omitempty" jsonschema:"rescope: path globs."`
	ScopeLanguages []string `json:"scope_languages,omitempty" jsonschema:"rescope: languages."`
	ScopeFields    []string `json:"scope_fields,omitempty" jsonschema:"rescope: fields."`
}

func (s *Server) auditActionTool() tool {
	return newTool(ToolAuditAction, "Govern a card (human)",
		`Human mode only. Change how a card is governed, not what it says: rescope it, revoke it (retire it from every context, kept on record), set its expiry or review date, its persistence or render preference, or mark it foundational. Each action is one audited event. To say a card is wrong, use palace_demote with a counterexample instead.`,
		hints{destructive: true}, map[string][]string{"action": host.AuditActions, "anchor": domain.Strings(domain.AnchorKinds)},
		func(ctx context.Context, a auditActionArgs) (output, error) {
			req := host.AuditActionRequest{Action: a.Action, Value: a.Value, Reason: a.Reason, Anchor: a.Anchor}
			// As the CLI: any scope list replaces the scope whole; rescope
			// with value none clears it.
			if a.ScopePaths != nil || a.ScopeLanguages != nil || a.ScopeFields != nil {
				req.Scope = &domain.Scope{Paths: a.ScopePaths, Languages: a.ScopeLanguages, Fields: a.ScopeFields}
			} else if a.Action == "rescope" && a.Value == "none" {
				req.Scope = &domain.Scope{}
			}
			res, err := s.h.AuditAction(ctx, a.ID, req)
			return output{Value: res}, err
		}).returning(outputOf[host.AuditActionResult]("The governed card and the event that changed it."))
}
