package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/audit"
)

func auditRow(t *testing.T, rep host.AuditReport, id string) audit.Row {
	t.Helper()
	for _, r := range rep.Rows {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("audit has no row %s", id)
	return audit.Row{}
}

func hasWarning(r audit.Row, code string) bool {
	return slices.ContainsFunc(r.Warnings, func(w audit.Warning) bool { return w.Code == code })
}

func hasSuggestion(r audit.Row, action string) bool {
	return slices.ContainsFunc(r.Suggested, func(s audit.Suggestion) bool { return s.Action == action })
}

// TestAuditShowsWhyACardCooled repeats the cooling story of
// TestContextCoolingMovesLanesNeverStatus at a smaller scale and checks what
// the audit says about the card afterwards.
func TestAuditShowsWhyACardCooled(t *testing.T) {
	ctx := context.Background()
	e := newCxEnv(t)
	h := e.openClock(e.repo("a", "https://github.com/acme/a"))
	id := e.card(h, scoped("keep write transactions short", "shu"))
	quiet := e.card(h, scoped("index every foreign key", "shu"))
	req := cxScopedRequest()
	req.DryRun, req.Budget = false, 1
	for day := range 8 {
		e.now = cxEpoch.Add(time.Duration(day) * 24 * time.Hour)
		if _, err := h.Pack().Context(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := h.Audit(ctx, audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	r := auditRow(t, rep, id)
	if r.Status != "promoted" || r.Counts30d.Trimmed != 8 || r.LastOutcome != "trimmed" {
		t.Errorf("row = status %s, 30d %+v, last %q; want promoted, 8 trimmed, last trimmed", r.Status, r.Counts30d, r.LastOutcome)
	}
	// The audit lanes a card as for a request just relevant to it (0.3):
	// 30 + 20 + 18 − 10 for trims = 58, scoped.
	if r.SalienceBreakdown["trimmed"] != -10 || r.Salience != 58 || r.Lane != "scoped" {
		t.Errorf("salience %d %v lane %s; want 30 + 20 + 18 − 10 for trims = 58, scoped", r.Salience, r.SalienceBreakdown, r.Lane)
	}
	if !hasWarning(r, "cooling") || !hasSuggestion(r, "prefer_compact") {
		t.Errorf("warnings %+v, suggestions %+v; want cooling and prefer_compact", r.Warnings, r.Suggested)
	}
	for _, s := range r.Suggested {
		if !strings.HasPrefix(s.Command, "palace audit action "+id+" --action "+s.Action) {
			t.Errorf("suggested command %q does not act on the card", s.Command)
		}
	}
	// Both cards were trimmed equally; filters narrow by lane and warning.
	for _, tt := range []struct {
		f    audit.Filter
		want []string
	}{
		{audit.Filter{Lane: "scoped"}, []string{id, quiet}},
		{audit.Filter{Lane: "core"}, nil},
		{audit.Filter{Warning: "cooling", Tier: "shu", Anchor: "worktree"}, []string{id, quiet}},
		{audit.Filter{Anchor: "repo"}, nil},
	} {
		rep, err := h.Audit(ctx, tt.f)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range rep.Rows {
			got = append(got, r.ID)
		}
		slices.Sort(got)
		want := slices.Clone(tt.want)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("filter %+v: rows %v, want %v", tt.f, got, want)
		}
	}
}

func TestAuditActions(t *testing.T) {
	ctx := context.Background()
	e := newCxEnv(t)
	dir := e.repo("a", "https://github.com/acme/a")
	h := e.open(dir, host.Human)
	tests := []struct {
		name    string
		req     host.AuditActionRequest
		check   func(c host.Card) bool
		from    string
		to      string
		wantErr string
	}{
		{"rescope", host.AuditActionRequest{Action: "rescope", Scope: &domain.Scope{Paths: []string{"cmd/**"}}, Reason: "only the CLI"},
			func(c host.Card) bool { return slices.Equal(c.Scope.Paths, []string{"cmd/**"}) }, "scope paths store/** · languages go · fields storage", "scope paths cmd/**", ""},
		{"retrigger", host.AuditActionRequest{Action: "retrigger", Trigger: &domain.Trigger{Patterns: []string{`BeginTx\(`}, Intents: []string{"debug"}}},
			func(c host.Card) bool {
				return slices.Equal(c.Trigger.Patterns, []string{`BeginTx\(`}) && slices.Equal(c.Trigger.Intents, []string{"debug"})
			}, "triggers patterns [] intents [debug, storage] tools []", "triggers patterns [BeginTx\\(] intents [debug] tools []", ""},
		{"retrigger within the limits", host.AuditActionRequest{Action: "retrigger", Trigger: &domain.Trigger{Patterns: []string{"("}}},
			nil, "", "", "--trigger-pattern"},
		{"set_expiry", host.AuditActionRequest{Action: "set_expiry", Value: "2027-01-01"},
			func(c host.Card) bool { return c.ExpiresAt == "2027-01-01T00:00:00.000Z" }, "expires_at none", "expires_at 2027-01-01T00:00:00.000Z", ""},
		{"set_review_after", host.AuditActionRequest{Action: "set_review_after", Value: "2026-06-01"},
			func(c host.Card) bool { return c.ReviewAfter == "2026-06-01T00:00:00.000Z" }, "review_after none", "review_after 2026-06-01T00:00:00.000Z", ""},
		{"mark_foundational", host.AuditActionRequest{Action: "mark_foundational"},
			func(c host.Card) bool { return c.Persistence == "foundational" }, "persistence standard", "persistence foundational", ""},
		{"prefer_compact", host.AuditActionRequest{Action: "prefer_compact"},
			func(c host.Card) bool { return c.RenderPref == "inline_compact" }, "render_pref auto", "render_pref inline_compact", ""},
		{"set_persistence", host.AuditActionRequest{Action: "set_persistence", Value: "protected"},
			func(c host.Card) bool { return c.Persistence == "protected" }, "persistence standard", "persistence protected", ""},
		{"set_render_pref", host.AuditActionRequest{Action: "set_render_pref", Value: "ref_preferred"},
			func(c host.Card) bool { return c.RenderPref == "ref_preferred" }, "render_pref auto", "render_pref ref_preferred", ""},
		{"revoke retires", host.AuditActionRequest{Action: "revoke", Reason: "superseded"},
			func(c host.Card) bool { return c.Status == "retired" }, "", "", ""},
		{"revoke needs a reason", host.AuditActionRequest{Action: "revoke"}, nil, "", "", "--reason is required to revoke"},
		{"widening the anchor goes through publish", host.AuditActionRequest{Action: "rescope", Anchor: "global", Scope: &domain.Scope{}},
			nil, "", "", "`palace publish ID --to repo --reason …`"},
		{"narrowing the anchor is refused", host.AuditActionRequest{Action: "rescope", Anchor: "worktree", Scope: &domain.Scope{}},
			nil, "", "", "an anchor only moves outward"},
		{"unknown action", host.AuditActionRequest{Action: "delete"}, nil, "", "", `action "delete" is not valid`},
		{"bad date", host.AuditActionRequest{Action: "set_expiry", Value: "soon"}, nil, "", "", `expires_at "soon" is not a date`},
		{"bad persistence", host.AuditActionRequest{Action: "set_persistence", Value: "forever"}, nil, "", "", `value "forever" is not valid`},
		{"no-op", host.AuditActionRequest{Action: "set_persistence", Value: "standard"}, nil, "", "", "already has persistence standard"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := scoped("audit target "+tt.name, "qi")
			if strings.Contains(tt.name, "narrowing") {
				c = c.at("repo")
			}
			id := e.card(h, c)
			res, err := h.AuditAction(ctx, id, tt.req)
			after, _ := h.ShowCard(ctx, id)
			events, _ := h.CardEvents(ctx, id, false)
			if tt.wantErr != "" {
				if host.KindOf(err) != host.KindInvalid || !strings.Contains(err.Error(), strings.ReplaceAll(tt.wantErr, "ID", id)) {
					t.Fatalf("err = %v, want invalid input naming %q", err, tt.wantErr)
				}
				if len(events) != 1 || after.Status != "promoted" || after.Persistence != "standard" {
					t.Errorf("a refused action changed the card: %d events, %+v", len(events), after.Card)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(after) || len(events) != 2 || events[1].ID != res.Event.ID {
				t.Fatalf("after %s: card %+v, %d events", tt.req.Action, after.Card, len(events))
			}
			if tt.from != "" {
				var d map[string]string
				if err := json.Unmarshal(res.Event.Data, &d); err != nil || d["from"] != tt.from || d["to"] != tt.to || d["action"] != tt.req.Action {
					t.Errorf("event %s data = %s, want from %q to %q", res.Event.Type, res.Event.Data, tt.from, tt.to)
				}
				if res.Event.Type != "updated" || res.Event.Actor != "tester" || res.Event.ActorType != "human" {
					t.Errorf("event = %+v", res.Event)
				}
			}
		})
	}
}

func TestAuditActionAgentModeRefused(t *testing.T) {
	ctx := context.Background()
	e := newCxEnv(t)
	dir := e.repo("a", "https://github.com/acme/a")
	id := e.card(e.open(dir, host.Human), scoped("keep write transactions short", "shu"))
	agent := e.open(dir, host.Agent)
	for _, action := range audit.Actions {
		_, err := agent.AuditAction(ctx, id, host.AuditActionRequest{Action: action, Value: "foundational", Reason: "r"})
		var he *host.Error
		if !errors.As(err, &he) || he.Kind != host.KindMode || host.ExitCode(err) != 3 {
			t.Errorf("%s in agent mode: err = %v, want a mode refusal (exit 3)", action, err)
		}
	}
	// Reading the audit is fine for an agent.
	if _, err := agent.Audit(ctx, audit.Filter{}); err != nil {
		t.Errorf("agent audit: %v", err)
	}
	events, _ := agent.CardEvents(ctx, id, false)
	if len(events) != 1 {
		t.Errorf("refused actions wrote %d events", len(events)-1)
	}
}
