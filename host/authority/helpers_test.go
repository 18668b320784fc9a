package authority_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/palacehq/palace/anchor"
	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/authority"
	"github.com/palacehq/palace/host/internal/jobtest"
	"github.com/palacehq/palace/internal/hosterr"
	"github.com/palacehq/palace/store"
)

// try hands ch to door d in one transaction, returning the outcome and
// the refusal (the transaction rolls back on one).
func try(f *jobtest.Fixture, d *authority.Door, ch authority.Change) (authority.Outcome, error) {
	ctx := context.Background()
	var out authority.Outcome
	err := f.Store.Tx(ctx, func(tx *store.Tx) error {
		var err error
		out, err = d.Apply(ctx, tx, ch)
		return err
	})
	return out, err
}

func wantKind(t *testing.T, what string, err error, kind hosterr.Kind, sub string) {
	t.Helper()
	var he *hosterr.Error
	if !errors.As(err, &he) || he.Kind != kind || !strings.Contains(err.Error(), sub) {
		t.Errorf("%s: %v; want kind %v naming %q", what, err, kind, sub)
	}
}

// card reads id as stored.
func card(t *testing.T, f *jobtest.Fixture, id string) domain.Card {
	t.Helper()
	c, err := f.Store.Card(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// events are card id's events, oldest first.
func events(t *testing.T, f *jobtest.Fixture, id string) []domain.Event {
	t.Helper()
	evs, err := f.Store.Events(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// contests are card id's open contests.
func contests(t *testing.T, f *jobtest.Fixture, id string) []store.Contest {
	t.Helper()
	m, err := f.Store.OpenContests(context.Background(), []string{id})
	if err != nil {
		t.Fatal(err)
	}
	return m[id]
}

// newCard is a card of f at anchor kind k, not written.
func newCard(f *jobtest.Fixture, statement string, tier domain.Tier, status domain.Status, k domain.AnchorKind) *domain.Card {
	now := store.FormatTime(f.Now())
	return &domain.Card{ID: store.NewID("card", f.Now()), Statement: statement, StatementNorm: domain.NormalizeStatement(statement), Tier: tier, Status: status,
		Domain: domain.DomainProject, Field: "general", AnchorID: anchor.ID(f.Loc.Identity(k)),
		Persistence: domain.PersistenceStandard, RenderPref: domain.RenderAuto, CreatedBy: f.Actor, CreatedAt: now, UpdatedAt: now}
}

func refs(role domain.Role, ids ...string) []authority.Refs {
	return []authority.Refs{{Role: role, IDs: ids}}
}

func seed(t testing.TB, f *jobtest.Fixture, c jobtest.Card) domain.Card { return f.Seed(t, c) }
