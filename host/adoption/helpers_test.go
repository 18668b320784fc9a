package adoption_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/adoption"
	"github.com/palacehq/palace/host/authority"
	"github.com/palacehq/palace/host/intake"
	"github.com/palacehq/palace/host/internal/jobtest"
	"github.com/palacehq/palace/internal/hosterr"
	"github.com/palacehq/palace/store"
)

// adopter is the adoption job of f as actor, built as host builds it: a
// contradiction contests through the door.
func adopter(f *jobtest.Fixture, actor string) *adoption.Adoption {
	env := f.Env
	env.Actor = actor
	return adoption.New(adoption.Config{
		Env: env, ActorType: domain.ActorType(f.Mode), TelemetryDays: 30, RefuseSecrets: intake.RefuseSecrets, ChainIDs: f.Loc.ChainIDs(),
		Contest: func(ctx context.Context, cardID, reason, evidenceID, source string) (bool, error) {
			err := f.Store.Tx(ctx, func(tx *store.Tx) error {
				_, err := f.Door().Apply(ctx, tx, authority.Change{Op: authority.OpContest, CardID: cardID,
					Contest: authority.Contest{Kind: authority.ContestContradiction, Reason: reason, EvidenceID: evidenceID, Source: source}})
				return err
			})
			if err != nil {
				return false, err
			}
			open, err := f.Store.OpenContests(ctx, []string{cardID})
			return len(open[cardID]) > 0, err
		},
	})
}

func wantKind(t *testing.T, what string, err error, kind hosterr.Kind, sub string) {
	t.Helper()
	var he *hosterr.Error
	if !errors.As(err, &he) || he.Kind != kind || !strings.Contains(err.Error(), sub) {
		t.Errorf("%s: %v; want kind %v naming %q", what, err, kind, sub)
	}
}

func seed(t testing.TB, f *jobtest.Fixture, c jobtest.Card) domain.Card { return f.Seed(t, c) }
