package jobenv_test

import (
	"context"
	"testing"

	"github.com/palacehq/palace/anchor"
	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/internal/jobtest"
	"github.com/palacehq/palace/store"
)

// Ensuring the worktree anchor writes the chain above it, with ids any
// machine derives alike; outside git every kind is the global anchor.
func TestEnsureAnchorWritesTheChain(t *testing.T) {
	ctx := context.Background()
	f := jobtest.New(t, jobtest.Options{Git: true})
	var wt store.Anchor
	if err := f.Store.Tx(ctx, func(tx *store.Tx) error {
		var err error
		wt, err = f.EnsureAnchor(ctx, tx, domain.AnchorWorktree)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	repoID := anchor.ID(f.Loc.Identity(domain.AnchorRepo))
	if wt.Kind != "worktree" || wt.ParentID != repoID || wt.Path != f.Loc.Worktree {
		t.Errorf("worktree anchor %+v", wt)
	}
	rows, err := f.Store.Anchors(ctx)
	if err != nil || len(rows) != 3 {
		t.Fatalf("anchors %+v, %v; want global, repo and worktree", rows, err)
	}
	plain := jobtest.New(t, jobtest.Options{})
	if err := plain.Store.Tx(ctx, func(tx *store.Tx) error {
		a, err := plain.EnsureAnchor(ctx, tx, domain.AnchorWorktree)
		if err == nil && (a.Kind != "global" || a.ID != anchor.ID(anchor.GlobalIdentity)) {
			t.Errorf("outside git: %+v", a)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
}
