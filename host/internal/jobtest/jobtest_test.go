package jobtest

import (
	"context"
	"testing"

	"github.com/palacehq/palace/domain"
)

func TestFixtureSeedsThroughTheDoor(t *testing.T) {
	f := New(t, Options{Git: true})
	if !f.Loc.InGit || f.Loc.Innermost() != domain.AnchorWorktree {
		t.Fatalf("workspace %+v: want a git worktree", f.Loc)
	}
	cand := f.Seed(t, Card{Statement: "Run go vet before a commit", Tier: domain.TierShu})
	law := f.Seed(t, Card{Statement: "Never push to main", Tier: domain.TierDaoRen, Status: domain.StatusPromoted, Anchor: domain.AnchorRepo})
	ctx := context.Background()
	for _, want := range []domain.Card{cand, law} {
		got, err := f.Store.Card(ctx, want.ID)
		if err != nil {
			t.Fatalf("card %s: %v", want.ID, err)
		}
		if got.Status != want.Status || got.Statement != want.Statement {
			t.Errorf("stored %s %q, want %s %q", got.Status, got.Statement, want.Status, want.Statement)
		}
	}
	agent := New(t, Options{Agent: true})
	if agent.Loc.InGit || agent.Mode != "agent" {
		t.Fatalf("agent fixture: %+v", agent.Env)
	}
}
