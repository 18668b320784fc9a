package gatekeep_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/palacehq/palace/anchor"
	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/authority"
	"github.com/palacehq/palace/host/gatekeep"
	"github.com/palacehq/palace/host/internal/jobtest"
	"github.com/palacehq/palace/internal/hosterr"
	"github.com/palacehq/palace/policies"
	"github.com/palacehq/palace/store"
)

// seeded writes a card of tier t at the worktree with supporting evidence
// (and verification, when verified) and returns it with its links.
func seeded(t *testing.T, f *jobtest.Fixture, statement string, tier domain.Tier, verified bool) (domain.Card, []domain.Link) {
	t.Helper()
	now := store.FormatTime(f.Now())
	c := domain.Card{ID: store.NewID("card", f.Now()), Statement: statement, StatementNorm: domain.NormalizeStatement(statement), Tier: tier, Status: domain.StatusCandidate,
		Domain: domain.DomainProject, Field: "general", AnchorID: anchor.ID(f.Loc.Identity(domain.AnchorWorktree)),
		Persistence: domain.PersistenceStandard, RenderPref: domain.RenderAuto, CreatedBy: f.Actor, CreatedAt: now, UpdatedAt: now}
	refs := []authority.Refs{{Role: domain.RoleSupporting, IDs: []string{f.Evidence(t, domain.AnchorWorktree, "seen: "+statement).ID}}}
	if verified {
		refs = append(refs, authority.Refs{Role: domain.RoleVerification, IDs: []string{f.Evidence(t, domain.AnchorWorktree, "checked: "+statement).ID}})
	}
	f.Apply(t, authority.Change{Op: authority.OpCreate, Card: &c, Refs: refs})
	links, err := f.Store.Links(context.Background(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	return c, links
}

func reasons(r gatekeep.Result) string { return strings.Join(r.Reasons, "; ") }

// The gate runs palace.gate on the card's evidence and names what is
// missing; the policy that decided is named by hash.
func TestEvaluateRunsThePolicy(t *testing.T) {
	ctx := context.Background()
	f := jobtest.New(t, jobtest.Options{Git: true})
	k := f.Keeper()
	c, links := seeded(t, f, "Run go vet before a commit", domain.TierShu, false)
	r := k.Evaluate(ctx, c, links, nil, "promote", "promoted", k.Reviewer(""), false)
	if r.Allow || r.Missing["verification"] != 1 || !strings.Contains(reasons(r), "verification: have 0, need 1") || r.Policy.Hash == "" || r.Counts.Supporting != 1 {
		t.Errorf("unverified: %+v", r)
	}
	c2, links2 := seeded(t, f, "Wrap each migration in one transaction", domain.TierShu, true)
	if r := k.Evaluate(ctx, c2, links2, nil, "promote", "promoted", k.Reviewer(""), false); !r.Allow {
		t.Errorf("verified: %+v", r)
	}
	if r := k.Evaluate(ctx, c2, links2, nil, "promote", "canonical", k.Reviewer(""), false); r.Allow || !strings.Contains(reasons(r), "supporting: have 1, need 2") {
		t.Errorf("canonical on one of each: %+v", r)
	}
	rec := gatekeep.Record(r)
	if rec["allow"] != false || rec["policy"] == nil {
		t.Errorf("record: %v", rec)
	}
}

// The floors deny whatever the policy says: an open contest (but for
// resolve), an expired card, dao_tian canonical without a person, a
// secret, research alone behind a dao card.
func TestEvaluateFloors(t *testing.T) {
	ctx := context.Background()
	f := jobtest.New(t, jobtest.Options{Git: true})
	k := f.Keeper()
	c, links := seeded(t, f, "Wrap each migration in one transaction", domain.TierShu, true)
	open := []store.Contest{{CardID: c.ID, Kind: "contradiction", Reason: "r", CreatedAt: store.FormatTime(f.Now())}}
	r := k.Evaluate(ctx, c, links, open, "promote", "promoted", k.Reviewer(""), false)
	if r.Allow || !strings.Contains(reasons(r), "floor: card "+c.ID+" is contested (contradiction") || !r.Contest.Contested {
		t.Errorf("contested: %+v", r)
	}
	if r := k.Evaluate(ctx, c, links, open, "resolve", "promoted", k.Reviewer(""), false); strings.Contains(reasons(r), "is contested") {
		t.Errorf("resolve is held by the contest floor: %+v", r)
	}

	expired := c
	expired.ExpiresAt = store.FormatTime(f.Now().Add(-time.Hour))
	if r := k.Evaluate(ctx, expired, links, nil, "promote", "promoted", k.Reviewer(""), false); r.Allow || !strings.Contains(reasons(r), "expired") {
		t.Errorf("expired: %+v", r)
	}

	secret := c
	secret.Content = "use AKIAIOSFODNN7EXAMPLE"
	if r := k.Evaluate(ctx, secret, links, nil, "promote", "promoted", k.Reviewer(""), false); r.Allow || !strings.Contains(reasons(r), "floor: the card contains a secret") || strings.Contains(reasons(r), "AKIAIOSFODNN7EXAMPLE") {
		t.Errorf("secret: %+v", r)
	}

	tian := c
	tian.Tier = domain.TierDaoTian
	agent := policies.Reviewer{Name: "bot", Type: "agent"}
	if r := k.Evaluate(ctx, tian, links, nil, "promote", "canonical", agent, false); r.Allow || !strings.Contains(reasons(r), "floor: dao_tian → canonical needs a human reviewer") {
		t.Errorf("dao_tian by an agent: %+v", r)
	}

	research := []domain.Link{
		{CardID: c.ID, EvidenceID: "ev_r1", Role: domain.RoleSupporting, Provenance: "research"},
		{CardID: c.ID, EvidenceID: "ev_r2", Role: domain.RoleSupporting, Provenance: "research"},
		{CardID: c.ID, EvidenceID: "ev_r3", Role: domain.RoleVerification, Provenance: "research"},
	}
	dao := c
	dao.Tier = domain.TierDaoRen
	if r := k.Evaluate(ctx, dao, research, nil, "promote", "promoted", k.Reviewer(""), false); r.Allow || !strings.Contains(reasons(r), "research evidence alone cannot make a dao_ren card authoritative") {
		t.Errorf("dao on research: %+v", r)
	}
	// The floor replaces an allowing policy's reasons.
	if r := k.Evaluate(ctx, expired, links, nil, "promote", "promoted", k.Reviewer(""), false); len(r.Reasons) != 1 || !strings.HasPrefix(r.Reasons[0], "floor: ") {
		t.Errorf("reasons %q; want the floor alone, not the allowing policy's", r.Reasons)
	}
}

// A policy set that cannot load denies (fail closed), naming why.
func TestEvaluateFailsClosed(t *testing.T) {
	f := jobtest.New(t, jobtest.Options{Git: true})
	c, links := seeded(t, f, "Wrap each migration in one transaction", domain.TierShu, true)
	broken := errors.New("gate.rego: parse error")
	k := f.Keeper()
	k.Policies = func(context.Context) (*policies.Set, error) { return nil, broken }
	r := k.Evaluate(context.Background(), c, links, nil, "promote", "promoted", k.Reviewer(""), false)
	if r.Allow || !strings.Contains(reasons(r), "policy palace.gate could not load, denying: gate.rego: parse error") || r.Policy.Error == "" || r.Missing == nil {
		t.Errorf("broken policy set: %+v", r)
	}
}

// A card file's claim counts only from the reviewed history: the default
// gate refuses one from an unreviewed commit, and the result names where
// it came from.
func TestEvaluateFromACardFile(t *testing.T) {
	f := jobtest.New(t, jobtest.Options{Git: true})
	k := f.Keeper()
	c, links := seeded(t, f, "Wrap each migration in one transaction", domain.TierShu, true)
	src := policies.GateSource{Channel: policies.SourceCardFile, Path: ".palace/cards/x.md", Commit: "abc123"}
	r := k.EvaluateFrom(context.Background(), c, links, nil, "promote", "promoted", k.Reviewer(""), false, src)
	if r.Allow || r.Source == nil || r.Source.Commit != "abc123" || !strings.Contains(reasons(r), "not on the upstream default branch") {
		t.Errorf("unreviewed card file: %+v", r)
	}
	if _, ok := gatekeep.Record(r)["source"]; !ok {
		t.Errorf("record omits the source")
	}
	src.Reviewed = true
	if r := k.EvaluateFrom(context.Background(), c, links, nil, "promote", "promoted", k.Reviewer(""), false, src); !r.Allow {
		t.Errorf("reviewed card file: %+v", r)
	}
}

func TestKeeperStamps(t *testing.T) {
	f := jobtest.New(t, jobtest.Options{Agent: true})
	k := f.Keeper()
	if k.Stamp() != store.FormatTime(jobtest.Start) || k.ActorType() != "agent" {
		t.Errorf("stamp %s, actor type %s", k.Stamp(), k.ActorType())
	}
}

func TestRecords(t *testing.T) {
	for in, want := range map[string]string{
		"2026-03-02":           "2026-03-02T00:00:00.000Z",
		"2026-03-02T10:30:00Z": "2026-03-02T10:30:00.000Z",
		"soon":                 "soon",
		"":                     "",
	} {
		if got := gatekeep.NormDate(in); got != want {
			t.Errorf("NormDate(%q) = %q, want %q", in, got, want)
		}
	}
	if _, err := gatekeep.ParseDate("03/02/2026"); err == nil {
		t.Errorf("ParseDate accepted 03/02/2026")
	}
	for _, c := range []struct{ what, id, want string }{
		{"card", "card_1", "no card card_1: list them with `palace card list --all-repos`"},
		{"evidence", "ev_1", "list it with `palace evidence list --all-repos`"},
		{"card", store.EvidencePrefix + "1", "is an evidence id: use `palace evidence show"},
	} {
		err := gatekeep.NotFound(store.ErrNotFound, c.what, c.id)
		if hosterr.KindOf(err) != hosterr.KindInvalid || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NotFound(%s %s) = %v", c.what, c.id, err)
		}
	}
	if err := gatekeep.NotFound(errors.New("disk"), "card", "card_1"); hosterr.KindOf(err) != hosterr.KindInternal {
		t.Errorf("another failure: %v, want internal", err)
	}
	got := gatekeep.LinkSummary([]domain.Link{{EvidenceID: "ev_1", Role: domain.RoleSupporting}})
	if len(got) != 1 || got[0]["evidence_id"] != "ev_1" || got[0]["role"] != "supporting" {
		t.Errorf("LinkSummary: %v", got)
	}
	if string(gatekeep.EventData(map[string]int{"n": 1})) != `{"n":1}` {
		t.Errorf("EventData")
	}
}
