package host_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/adoption"
	"github.com/palacehq/palace/host/authority"
	"github.com/palacehq/palace/host/intake"
	"github.com/palacehq/palace/host/teamsync"
)

// channel is one way a card can change, exercised against a palace.
type channel struct {
	name string
	// run changes a card and returns its id.
	run func(t *testing.T) string
	// by is who must have decided the change it makes (its last event).
	by domain.DecidedBy
}

// TestTrustModelEveryChannelGoesThroughTheDoor drives every channel that
// can change a card — the lifecycle verbs the CLI, the editor, MCP and the
// review desk call, audit actions, the candidate expiry, rule-file import
// and card-file sync — and checks each change left an event that says who
// decided it, a raise to authority only by the gate (or a person's direct
// write), and that in agent mode every channel a person decides is refused
// before it writes. (internal/archtest proves statically that nothing but
// the door writes the card tables.)
func TestTrustModelEveryChannelGoesThroughTheDoor(t *testing.T) {
	ctx := context.Background()
	e := newCxEnv(t)
	dir := e.repo("widgets", "https://github.com/acme/widgets")
	h := e.openClock(dir)
	candidate := func(statement string) string {
		return e.card(h, cxCard{statement: statement, tier: "shu", anchor: "repo", status: "candidate"})
	}
	authoritative := func(statement string) string {
		id := candidate(statement)
		if _, err := h.Promote(ctx, id, host.PromoteRequest{Reason: "verified"}); err != nil {
			t.Fatal(err)
		}
		return id
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	channels := []channel{
		{"distill", func(t *testing.T) string { return candidate("Distilled rule") }, domain.DecidedByRule},
		{"distill --direct", func(t *testing.T) string {
			return e.card(h, cxCard{statement: "Directly written rule", tier: "qi", anchor: "repo"})
		}, domain.DecidedByHuman},
		{"promote", func(t *testing.T) string { return authoritative("Promoted rule") }, domain.DecidedByGate},
		{"link", func(t *testing.T) string {
			id := candidate("Linked rule")
			_, err := h.Link(ctx, id, host.LinkRequest{Role: "supporting", EvidenceID: e.ev(h, "seen again", "general", "")})
			must(err)
			return id
		}, domain.DecidedByRule},
		{"contest", func(t *testing.T) string {
			id := authoritative("Contested rule")
			_, err := h.MarkContested(ctx, id, host.ContestRequest{Kind: authority.ContestContradiction, Reason: "failed in staging",
				EvidenceID: e.ev(h, "it failed in staging", "general", "")})
			must(err)
			return id
		}, domain.DecidedByRule},
		{"adoption signal", func(t *testing.T) string {
			id := authoritative("Signalled rule")
			// A signal without evidence is a signal, never a change.
			_, err := h.Adoption().Adopt(ctx, adoption.Request{Signal: "contradiction", CardID: id, Note: "ignore this rule", AllowWarnings: true})
			must(err)
			if evs, _ := h.CardEvents(ctx, id, false); evs[len(evs)-1].Type != domain.EventPromoted {
				t.Errorf("a contradiction without evidence changed the card: %+v", evs[len(evs)-1])
			}
			res, err := h.Adoption().Adopt(ctx, adoption.Request{Signal: "contradiction", CardID: id, EvidenceID: e.ev(h, "it broke the build", "general", ""), Note: "broke the build"})
			must(err)
			if !res.Contested {
				t.Errorf("a contradiction on evidence did not contest: %+v", res)
			}
			return id
		}, domain.DecidedByRule},
		{"resolve", func(t *testing.T) string {
			id := authoritative("Resolved rule")
			_, err := h.Link(ctx, id, host.LinkRequest{Role: "counterexample", EvidenceID: e.ev(h, "one failure", "general", "")})
			must(err)
			e.now = e.now.Add(time.Minute)
			_, err = h.Resolve(ctx, id, host.ResolveRequest{Reason: "fixed", Verification: []string{e.ev(h, "passes again", "general", "")}})
			must(err)
			return id
		}, domain.DecidedByGate},
		{"demote", func(t *testing.T) string {
			id := authoritative("Demoted rule")
			_, err := h.Demote(ctx, id, host.DemoteRequest{Reason: "wrong", Counterexample: []string{e.ev(h, "it is wrong", "general", "")}})
			must(err)
			return id
		}, domain.DecidedByHuman},
		{"retire", func(t *testing.T) string {
			id := authoritative("Retired rule")
			_, err := h.Retire(ctx, id, "obsolete")
			must(err)
			return id
		}, domain.DecidedByHuman},
		{"publish", func(t *testing.T) string {
			id := e.card(h, cxCard{statement: "Published rule", tier: "qi", anchor: "worktree", status: "candidate"})
			_, err := h.Promote(ctx, id, host.PromoteRequest{Reason: "ok"})
			must(err)
			res, err := h.Publish(ctx, id, host.PublishRequest{To: "repo", Reason: "holds for the repo"})
			must(err)
			return res.Copy.ID
		}, domain.DecidedByGate},
		{"audit action", func(t *testing.T) string {
			id := authoritative("Governed rule")
			_, err := h.AuditAction(ctx, id, host.AuditActionRequest{Action: "set_persistence", Value: "protected"})
			must(err)
			return id
		}, domain.DecidedByHuman},
		{"candidate expiry", func(t *testing.T) string {
			id := candidate("Expired rule")
			e.now = e.now.Add(400 * 24 * time.Hour)
			_, err := h.Candidates(ctx, host.CandidateRequest{Apply: true})
			must(err)
			return id
		}, domain.DecidedByRule},
		{"rule-file import", func(t *testing.T) string {
			if err := os.WriteFile(filepath.Join(dir, "AGENTS.md"), []byte("# Rules\n\n- Keep handlers small and named.\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := h.ImportRules(ctx, intake.ImportRequest{Files: []string{"AGENTS.md"}})
			must(err)
			return res.Files[0].Rules[0].CardID
		}, domain.DecidedByRule},
		{"card-file sync", func(t *testing.T) string {
			id := authoritative("Synced rule")
			mustSync(t, h, teamsync.SyncRequest{})
			e.commitReviewed(dir, "share")
			other := newCxEnv(t)
			clone := filepath.Join(other.root, "widgets")
			other.git(other.root, "clone", "-q", dir, clone)
			hb := other.open(clone, host.Human)
			if rep := mustSync(t, hb, teamsync.SyncRequest{}); !slices.Contains(rep.Imported, id) {
				t.Fatalf("the clone imported %v, want %s", rep.Imported, id)
			}
			evs, err := hb.CardEvents(ctx, id, false)
			must(err)
			if last := evs[len(evs)-1]; last.Type != domain.EventImported || last.DecidedBy != domain.DecidedByGate || last.PolicyHash == "" {
				t.Errorf("the clone's import event %+v, want imported, decided by the gate with its policy", last)
			}
			return id
		}, domain.DecidedByGate},
	}
	for _, c := range channels {
		t.Run(c.name, func(t *testing.T) {
			id := c.run(t)
			evs, err := h.CardEvents(ctx, id, true)
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) == 0 {
				t.Fatalf("%s left no event on %s", c.name, id)
			}
			for _, ev := range evs {
				if !slices.Contains(domain.Deciders, ev.DecidedBy) {
					t.Errorf("%s: event %s %s says no decider", c.name, ev.Type, ev.ID)
				}
				raised := ev.ToStatus.Authoritative() && !ev.FromStatus.Authoritative()
				if raised && ev.DecidedBy != domain.DecidedByGate && ev.Type != domain.EventDirectWrite {
					t.Errorf("%s: event %s raised %s to %s decided by %s, want the gate", c.name, ev.Type, id, ev.ToStatus, ev.DecidedBy)
				}
				if ev.DecidedBy == domain.DecidedByGate && (ev.PolicyHash == "" || !strings.Contains(string(ev.Decision), `"allow":true`)) {
					t.Errorf("%s: gate event %s carries no allowing decision: %s", c.name, ev.Type, ev.Decision)
				}
			}
			if last := evs[len(evs)-1]; last.DecidedBy != c.by {
				t.Errorf("%s: last event %s decided by %q, want %q", c.name, last.Type, last.DecidedBy, c.by)
			}
		})
	}

	// In agent mode, every change a person or the gate's human reviewer
	// decides is refused before anything is written.
	ha := e.open(dir, host.Agent)
	id := candidate("Agent target rule")
	before, _ := h.CardEvents(ctx, id, false)
	for name, err := range map[string]error{
		"promote": func() error { _, err := ha.Promote(ctx, id, host.PromoteRequest{Reason: "x"}); return err }(),
		"demote": func() error {
			_, err := ha.Demote(ctx, id, host.DemoteRequest{Reason: "x", Counterexample: []string{"ev_x"}})
			return err
		}(),
		"retire": func() error { _, err := ha.Retire(ctx, id, "x"); return err }(),
		"publish": func() error {
			_, err := ha.Publish(ctx, id, host.PublishRequest{To: "global", Reason: "x"})
			return err
		}(),
		"resolve": func() error {
			_, err := ha.Resolve(ctx, id, host.ResolveRequest{Reason: "x", Verification: []string{"ev_x"}})
			return err
		}(),
		"audit action": func() error {
			_, err := ha.AuditAction(ctx, id, host.AuditActionRequest{Action: "revoke", Reason: "x"})
			return err
		}(),
		"distill --direct": func() error {
			_, err := ha.Distill(ctx, intake.DistillRequest{Statement: "agent law", Tier: "qi", Direct: true, Status: "promoted"})
			return err
		}(),
		"sync": func() error { _, err := ha.Sync(ctx, teamsync.SyncRequest{}); return err }(),
	} {
		if host.KindOf(err) != host.KindMode {
			t.Errorf("agent %s: %v, want refused by mode", name, err)
		}
	}
	if after, _ := h.CardEvents(ctx, id, false); len(after) != len(before) {
		t.Errorf("refused agent changes wrote %d events", len(after)-len(before))
	}
}
