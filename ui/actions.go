package ui

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
)

// The changes a reviewer makes. Each is one call of a host lifecycle
// method with the form's values — the same door as the CLI's promote,
// retire, link and audit action — and answers with a redirect to the page
// the form was on and a message about what happened. The guard has
// checked the session, the mode and the CSRF token already.

func (s *Server) promote(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	res, err := s.h.Promote(r.Context(), id, host.PromoteRequest{Reason: r.PostForm.Get("reason"), Target: r.PostForm.Get("target")})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.done(w, r, id, fmt.Sprintf("Promoted %s to %s (policy %s).", id, res.Card.Status, shortHash(res.Event.PolicyHash)))
}

func (s *Server) retire(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if _, err := s.h.Retire(r.Context(), id, r.PostForm.Get("reason")); err != nil {
		s.fail(w, r, err)
		return
	}
	s.done(w, r, id, "Retired "+id+".")
}

func (s *Server) resolve(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	f := r.PostForm
	res, err := s.h.Resolve(r.Context(), id, host.ResolveRequest{Verification: commaList(f.Get("verification")), Reason: f.Get("reason")})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.done(w, r, id, fmt.Sprintf("Resolved %s: it is %s and back in its lanes (policy %s).", id, res.Card.Status, shortHash(res.Event.PolicyHash)))
}

func (s *Server) demote(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	f := r.PostForm
	if _, err := s.h.Demote(r.Context(), id, host.DemoteRequest{Counterexample: commaList(f.Get("counterexample")), Reason: f.Get("reason")}); err != nil {
		s.fail(w, r, err)
		return
	}
	s.done(w, r, id, "Demoted "+id+".")
}

func (s *Server) link(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	f := r.PostForm
	res, err := s.h.Link(r.Context(), id, host.LinkRequest{Role: f.Get("role"), EvidenceID: strings.TrimSpace(f.Get("evidence")), Note: f.Get("note")})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	msg := "Linked " + f.Get("evidence") + " to " + id + " as " + f.Get("role") + "."
	if !res.Added {
		msg = f.Get("evidence") + " was linked to " + id + " as " + f.Get("role") + " already."
	}
	if res.Contest != nil {
		msg += " The counterexample contests the card."
	}
	s.done(w, r, id, msg)
}

func (s *Server) rescope(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	f := r.PostForm
	// Path globs may hold commas ({a,b}/**): one a line. Languages and
	// fields never do.
	sc := domain.Scope{Paths: lines(f.Get("paths")), Languages: commaList(f.Get("languages")), Fields: commaList(f.Get("fields"))}
	res, err := s.h.AuditAction(r.Context(), id, host.AuditActionRequest{Action: domain.AuditRescope, Scope: &sc, Reason: f.Get("reason")})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.done(w, r, id, "Scope of "+id+" is now: "+scopeText(res.Card.Scope)+".")
}

func (s *Server) retrigger(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	f := r.PostForm
	// A pattern may hold a comma: one a line. Intents and tools never do.
	tr := domain.Trigger{Patterns: lines(f.Get("patterns")), Intents: commaList(f.Get("intents")), ToolNeeds: commaList(f.Get("tools"))}
	res, err := s.h.AuditAction(r.Context(), id, host.AuditActionRequest{Action: domain.AuditRetrigger, Trigger: &tr, Reason: f.Get("reason")})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	n := len(res.Card.Trigger.Patterns) + len(res.Card.Trigger.Intents) + len(res.Card.Trigger.ToolNeeds)
	s.done(w, r, id, fmt.Sprintf("Triggers of %s saved (%d in all).", id, n))
}

func (s *Server) auditAction(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	f := r.PostForm
	res, err := s.h.AuditAction(r.Context(), id, host.AuditActionRequest{Action: f.Get("action"), Value: f.Get("value"), Reason: f.Get("reason")})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.done(w, r, id, fmt.Sprintf("Applied %s to %s (now %s).", res.Action, id, res.Card.Status))
}

// done redirects to the form's page with msg to show there.
func (s *Server) done(w http.ResponseWriter, r *http.Request, id, msg string) {
	to := returnTo(r, id)
	if key := s.setFlash(msg, false); key != "" {
		sep := "?"
		if strings.Contains(to, "?") {
			sep = "&"
		}
		to += sep + "flash=" + key
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func commaList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
