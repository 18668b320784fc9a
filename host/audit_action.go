package host

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/audit"
	"github.com/palacehq/palace/host/authority"
	"github.com/palacehq/palace/host/gatekeep"
	"github.com/palacehq/palace/internal/limits"
	"github.com/palacehq/palace/internal/strlist"
	"github.com/palacehq/palace/store"
)

// AuditActionRequest changes how a card is governed, not what it says.
type AuditActionRequest struct {
	// Action is one of audit.Actions.
	Action string `json:"action"`
	// Value is the new value of set_expiry and set_review_after (a date;
	// "none" clears it), set_persistence (standard, protected, foundational)
	// and set_render_pref (auto, inline_full, inline_compact, ref_preferred).
	Value string `json:"value,omitempty"`
	// Scope is rescope's new scope; it replaces the old one whole. An empty
	// Scope makes the card apply everywhere at its anchor.
	Scope *domain.Scope `json:"scope,omitempty"`
	// Trigger is retrigger's new trigger patterns, intents and tool needs;
	// it replaces the old ones whole, within the trigger limits.
	Trigger *domain.Trigger `json:"trigger,omitempty"`
	// Anchor, for rescope, names the anchor kind the card should live at.
	// Only its own anchor is accepted: widening goes through `palace
	// publish` (gated, copied, audited), and narrowing means distilling a
	// narrower card and revoking this one.
	Anchor string `json:"anchor,omitempty"`
	// Reason is recorded on the event; required for revoke.
	Reason string `json:"reason,omitempty"`
}

// AuditActionResult is the card after the action and the event recorded.
type AuditActionResult struct {
	Action string       `json:"action"`
	Card   Card         `json:"card"`
	Event  domain.Event `json:"event"`
}

// AuditAction applies one audit action to card id in one transaction with
// an `updated` event, or `retired` for revoke (the card stays on record; to
// say it is wrong, demote it with a counterexample). Human mode only, checked
// before anything is read. Bad input, another repository's or a retired card
// and no-op changes are KindInvalid and change nothing.
func (h *Host) AuditAction(ctx context.Context, id string, req AuditActionRequest) (AuditActionResult, error) {
	if err := h.gatekeeper().RequireHuman("audit action"); err != nil {
		return AuditActionResult{}, err
	}
	if err := oneOf("action", req.Action, audit.Actions); err != nil {
		return AuditActionResult{}, err
	}
	if req.Action == domain.AuditRevoke && strings.TrimSpace(req.Reason) == "" {
		return AuditActionResult{}, invalid("reason", "--reason is required to revoke: say why the card no longer holds")
	}
	if req.Action == domain.AuditRescope && req.Anchor != "" {
		// Say no to a move between anchors before anything else about it.
		c, err := h.store.Card(ctx, id)
		if err != nil {
			return AuditActionResult{}, gatekeep.NotFound(err, "card", id)
		}
		if from := h.loc.KindOf(c.AnchorID); from != "" {
			if err := rescopeAnchor(id, from, req.Anchor); err != nil {
				return AuditActionResult{}, err
			}
		}
	}
	attrs, describe, err := h.auditAttrs(req)
	if err != nil {
		return AuditActionResult{}, err
	}
	reason := cmp.Or(strings.TrimSpace(req.Reason), "palace audit action "+req.Action)
	ch := authority.Change{Op: authority.OpGovern, CardID: id, Reason: reason, Attrs: &attrs, Data: map[string]any{"action": req.Action}}
	if req.Action == domain.AuditRevoke {
		ch = authority.Change{Op: authority.OpRetire, CardID: id, Reason: reason, Data: map[string]any{"action": domain.AuditRevoke}}
	} else {
		c, err := h.store.Card(ctx, id)
		if err != nil {
			return AuditActionResult{}, gatekeep.NotFound(err, "card", id)
		}
		ch.From, ch.To = describe(c)
	}
	res, err := h.change(ctx, ch)
	if err != nil {
		return AuditActionResult{}, err
	}
	return AuditActionResult{Action: req.Action, Card: res.Card, Event: res.Event}, nil
}

// auditAttrs validates req's value and returns the attribute change, with a
// function describing the card's old and new value for the event.
func (h *Host) auditAttrs(req AuditActionRequest) (store.CardAttrs, func(domain.Card) (string, string), error) {
	str := func(s string) *string { return &s }
	var a store.CardAttrs
	var old func(domain.Card) string
	var now string
	date := func(field string) (*string, error) {
		v := strings.TrimSpace(req.Value)
		switch v {
		case "":
			return nil, invalid("value", "--value is required for %s: a date (YYYY-MM-DD or RFC3339), or none to clear it", req.Action)
		case "none":
			return str(""), nil
		}
		if _, err := gatekeep.ParseDate(v); err != nil {
			return nil, invalid("value", "%s %q is not a date: use YYYY-MM-DD, RFC3339 or none", field, v)
		}
		return str(gatekeep.NormDate(v)), nil
	}
	var err error
	switch req.Action {
	case domain.AuditRevoke:
		return a, nil, nil
	case domain.AuditRescope:
		if req.Scope == nil {
			return a, nil, invalid("scope", "rescope needs the new scope: --scope-path, --scope-lang and/or --scope-field (or --value none to make it apply everywhere at its anchor)")
		}
		sc := domain.Scope{Paths: strlist.Clean(req.Scope.Paths), Languages: strlist.Clean(req.Scope.Languages), Fields: strlist.Clean(req.Scope.Fields)}
		if err := limits.Scope(sc); err != nil {
			return a, nil, err
		}
		a.Scope = &sc
		old, now = func(c domain.Card) string { return scopeText(c.Scope) }, scopeText(sc)
	case domain.AuditRetrigger:
		if req.Trigger == nil {
			return a, nil, invalid("trigger", "retrigger needs the new triggers: --trigger-pattern, --intent and/or --tool-need (or --value none to clear them)")
		}
		tr := domain.Trigger{Patterns: strlist.Clean(req.Trigger.Patterns), Intents: strlist.Clean(req.Trigger.Intents), ToolNeeds: strlist.Clean(req.Trigger.ToolNeeds)}
		if err := limits.Triggers(tr); err != nil {
			return a, nil, err
		}
		a.Trigger = &tr
		old, now = func(c domain.Card) string { return triggerText(c.Trigger) }, triggerText(tr)
	case domain.AuditSetExpiry:
		if a.ExpiresAt, err = date("expires_at"); err != nil {
			return a, nil, err
		}
		old, now = func(c domain.Card) string { return "expires_at " + orNone(c.ExpiresAt) }, "expires_at "+orNone(*a.ExpiresAt)
	case domain.AuditSetReviewAfter:
		if a.ReviewAfter, err = date("review_after"); err != nil {
			return a, nil, err
		}
		old, now = func(c domain.Card) string { return "review_after " + orNone(c.ReviewAfter) }, "review_after "+orNone(*a.ReviewAfter)
	case domain.AuditMarkFoundational, domain.AuditSetPersistence:
		v := string(domain.PersistenceFoundational)
		if req.Action == domain.AuditSetPersistence {
			v = strings.TrimSpace(req.Value)
			if err := oneOf("value", domain.Persistence(v), domain.Persistences); err != nil {
				return a, nil, err
			}
		}
		a.Persistence = &v
		old, now = func(c domain.Card) string { return "persistence " + string(c.Persistence) }, "persistence "+v
	case domain.AuditPreferCompact, domain.AuditSetRenderPref:
		v := string(domain.RenderInlineCompact)
		if req.Action == domain.AuditSetRenderPref {
			v = strings.TrimSpace(req.Value)
			if err := oneOf("value", domain.RenderPref(v), domain.RenderPrefs); err != nil {
				return a, nil, err
			}
		}
		a.RenderPref = &v
		old, now = func(c domain.Card) string { return "render_pref " + string(c.RenderPref) }, "render_pref "+v
	}
	return a, func(c domain.Card) (string, string) { return old(c), now }, nil
}

// rescopeAnchor refuses moving a card to another anchor through the audit.
func rescopeAnchor(id string, from domain.AnchorKind, to string) error {
	if to == "" || domain.AnchorKind(to) == from {
		return nil
	}
	order := []domain.AnchorKind{domain.AnchorWorktree, domain.AnchorRepo, domain.AnchorGlobal}
	fi, ti := slices.Index(order, from), slices.Index(order, domain.AnchorKind(to))
	switch {
	case ti < 0:
		return invalid("anchor", "--anchor %q is not valid: use worktree, repo or global", to)
	case ti > fi:
		next := authority.Outward(from)
		return invalid("anchor", "rescoping %s from the %s anchor to %s widens who sees it: that goes through the gate with `palace publish %s --to %s --reason …` (one step at a time), not through the audit", id, from, to, id, next)
	}
	return invalid("anchor", "card %s lives at the %s anchor and an anchor only moves outward, by publish: to narrow it, distill a card at the %s anchor and revoke this one", id, from, to)
}

func scopeText(s domain.Scope) string {
	if d := s.String(); d != "" {
		return "scope " + d
	}
	return "scope everywhere"
}

func triggerText(t domain.Trigger) string {
	if len(t.Patterns)+len(t.Intents)+len(t.ToolNeeds) == 0 {
		return "no triggers"
	}
	return fmt.Sprintf("triggers patterns [%s] intents [%s] tools [%s]", strings.Join(t.Patterns, ", "), strings.Join(t.Intents, ", "), strings.Join(t.ToolNeeds, ", "))
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
