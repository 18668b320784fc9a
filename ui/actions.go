package ui

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
)

// changes are the changes a reviewer makes, by the last element of their
// route (POST /card/{id}/NAME). Each is one call of a host lifecycle method
// with the form's values — the same door as the CLI's promote, retire, link
// and audit action — and says what happened; the answer is a redirect to
// the page the form was on, with that message. The guard has checked the
// session, the mode and the CSRF token already.
var changes = map[string]func(ctx context.Context, h *host.Host, id string, f url.Values) (string, error){
	"promote": func(ctx context.Context, h *host.Host, id string, f url.Values) (string, error) {
		res, err := h.Promote(ctx, id, host.PromoteRequest{Reason: f.Get("reason"), Target: f.Get("target")})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("Promoted %s to %s (policy %s).", id, res.Card.Status, shortHash(res.Event.PolicyHash)), nil
	},
	"retire": func(ctx context.Context, h *host.Host, id string, f url.Values) (string, error) {
		_, err := h.Retire(ctx, id, f.Get("reason"))
		return "Retired " + id + ".", err
	},
	"resolve": func(ctx context.Context, h *host.Host, id string, f url.Values) (string, error) {
		res, err := h.Resolve(ctx, id, host.ResolveRequest{Verification: split(f.Get("verification"), ","), Reason: f.Get("reason")})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("Resolved %s: it is %s and back in its lanes (policy %s).", id, res.Card.Status, shortHash(res.Event.PolicyHash)), nil
	},
	"demote": func(ctx context.Context, h *host.Host, id string, f url.Values) (string, error) {
		_, err := h.Demote(ctx, id, host.DemoteRequest{Counterexample: split(f.Get("counterexample"), ","), Reason: f.Get("reason")})
		return "Demoted " + id + ".", err
	},
	"link": func(ctx context.Context, h *host.Host, id string, f url.Values) (string, error) {
		res, err := h.Link(ctx, id, host.LinkRequest{Role: f.Get("role"), EvidenceID: strings.TrimSpace(f.Get("evidence")), Note: f.Get("note")})
		if err != nil {
			return "", err
		}
		msg := "Linked " + f.Get("evidence") + " to " + id + " as " + f.Get("role") + "."
		if !res.Added {
			msg = f.Get("evidence") + " was linked to " + id + " as " + f.Get("role") + " already."
		}
		if res.Contest != nil {
			msg += " The counterexample contests the card."
		}
		return msg, nil
	},
	"rescope": func(ctx context.Context, h *host.Host, id string, f url.Values) (string, error) {
		// Path globs may hold commas ({a,b}/**): one a line. Languages and
		// fields never do.
		sc := domain.Scope{Paths: split(f.Get("paths"), "\n"), Languages: split(f.Get("languages"), ","), Fields: split(f.Get("fields"), ",")}
		res, err := h.AuditAction(ctx, id, host.AuditActionRequest{Action: domain.AuditRescope, Scope: &sc, Reason: f.Get("reason")})
		if err != nil {
			return "", err
		}
		return "Scope of " + id + " is now: " + scopeText(res.Card.Scope) + ".", nil
	},
	"retrigger": func(ctx context.Context, h *host.Host, id string, f url.Values) (string, error) {
		// A pattern may hold a comma: one a line. Intents and tools never do.
		tr := domain.Trigger{Patterns: split(f.Get("patterns"), "\n"), Intents: split(f.Get("intents"), ","), ToolNeeds: split(f.Get("tools"), ",")}
		res, err := h.AuditAction(ctx, id, host.AuditActionRequest{Action: domain.AuditRetrigger, Trigger: &tr, Reason: f.Get("reason")})
		if err != nil {
			return "", err
		}
		n := len(res.Card.Trigger.Patterns) + len(res.Card.Trigger.Intents) + len(res.Card.Trigger.ToolNeeds)
		return fmt.Sprintf("Triggers of %s saved (%d in all).", id, n), nil
	},
	"action": func(ctx context.Context, h *host.Host, id string, f url.Values) (string, error) {
		res, err := h.AuditAction(ctx, id, host.AuditActionRequest{Action: f.Get("action"), Value: f.Get("value"), Reason: f.Get("reason")})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("Applied %s to %s (now %s).", res.Action, id, res.Card.Status), nil
	},
}

// change serves one of changes: a redirect to the form's page with the
// message to show there, or the error page.
func (s *Server) change(name string) http.HandlerFunc {
	fn := changes[name]
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		msg, err := fn(r.Context(), s.h, id, r.PostForm)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		to := returnTo(r, id)
		if key := s.setFlash(msg); key != "" {
			sep := "?"
			if strings.Contains(to, "?") {
				sep = "&"
			}
			to += sep + "flash=" + key
		}
		http.Redirect(w, r, to, http.StatusSeeOther)
	}
}

// split returns the pieces of s between seps, trimmed, without empty ones.
func split(s, sep string) []string {
	var out []string
	for _, v := range strings.Split(s, sep) {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
