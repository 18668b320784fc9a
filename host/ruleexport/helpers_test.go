package ruleexport_test

import (
	"testing"

	"github.com/palacehq/palace/anchor"
	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/authority"
	"github.com/palacehq/palace/host/internal/jobtest"
	"github.com/palacehq/palace/store"
)

// seed writes c through the door as jobtest.Fixture.Seed does, with the
// statement's normal form set, so that several cards share an anchor (the
// fixture leaves StatementNorm empty, and the door refuses a second card
// with the same normal form at an anchor).
func seed(t testing.TB, f *jobtest.Fixture, c jobtest.Card) domain.Card {
	t.Helper()
	if c.Anchor == "" {
		c.Anchor = f.Loc.Innermost()
	}
	if c.Status == "" {
		c.Status = domain.StatusCandidate
	}
	if c.Field == "" {
		c.Field = "general"
	}
	if len(c.Supporting) == 0 {
		c.Supporting = []string{f.Evidence(t, c.Anchor, "seen: "+c.Statement).ID}
	}
	now := store.FormatTime(f.Now())
	card := domain.Card{ID: store.NewID("card", f.Now()), Statement: c.Statement, StatementNorm: domain.NormalizeStatement(c.Statement), Tier: c.Tier, Status: c.Status,
		Domain: domain.DomainProject, Field: c.Field, AnchorID: anchor.ID(f.Loc.Identity(c.Anchor)), Scope: c.Scope, Trigger: c.Trigger,
		Persistence: domain.PersistenceStandard, RenderPref: domain.RenderAuto, CreatedBy: f.Actor, CreatedAt: now, UpdatedAt: now}
	op := authority.OpCreate
	if c.Status != domain.StatusCandidate {
		op = authority.OpDirect
	}
	return f.Apply(t, authority.Change{Op: op, Card: &card, Refs: []authority.Refs{{Role: domain.RoleSupporting, IDs: c.Supporting}}, Reason: "seeded by the test"}).Card
}
