// Package jobenv holds what the host lends every job below it (packs, team
// sync, intake, the mailbox front end, adoption, audit, research, rule
// export, the gate): the store, the workspace, who acts, the clock and the
// policy set. A job's Config embeds Env and adds only what is its own. It
// must not import host or any job.
package jobenv

import (
	"context"
	"time"

	"github.com/palacehq/palace/anchor"
	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/policies"
	"github.com/palacehq/palace/store"
)

// Env is the shared part of every job's configuration. The host fills all
// of it; a job documents which fields it reads.
type Env struct {
	// Store is the open palace; nil for a job that runs without a database
	// (the mailbox front end, the card-file check).
	Store *store.Store
	// Loc is the workspace the job acts for.
	Loc anchor.Location
	// Mode is "human" or "agent", fixed for the host's life.
	Mode string
	// Actor names who acts.
	Actor string
	// Now is the clock.
	Now func() time.Time
	// Policies returns the policy set in force (a watcher may swap it).
	// A set that fails to load makes the embedded defaults decide, except
	// where the job says it fails closed.
	Policies func(context.Context) (*policies.Set, error)
}

// EnsureAnchor writes the anchor of kind k at the workspace and its parents
// in tx, returning k's row; outside git every kind is the global anchor.
func (e Env) EnsureAnchor(ctx context.Context, tx *store.Tx, k domain.AnchorKind) (store.Anchor, error) {
	chain := []domain.AnchorKind{domain.AnchorGlobal}
	if e.Loc.InGit {
		switch k {
		case domain.AnchorRepo:
			chain = append(chain, domain.AnchorRepo)
		case domain.AnchorWorktree:
			chain = append(chain, domain.AnchorRepo, domain.AnchorWorktree)
		}
	}
	var a store.Anchor
	for _, kind := range chain {
		var err error
		if a, err = tx.EnsureAnchor(ctx, AnchorRow(e.Loc, kind, store.FormatTime(e.Now()))); err != nil {
			return store.Anchor{}, err
		}
	}
	return a, nil
}

// AnchorRow describes the anchor of kind k at loc, created at now.
func AnchorRow(loc anchor.Location, k domain.AnchorKind, now string) store.Anchor {
	identity := loc.Identity(k)
	a := store.Anchor{ID: anchor.ID(identity), Identity: identity, CreatedAt: now}
	switch {
	case identity == anchor.GlobalIdentity:
		a.Kind = string(domain.AnchorGlobal)
	case k == domain.AnchorRepo:
		a.Kind, a.Path = string(domain.AnchorRepo), loc.RepoRoot
		a.ParentID = anchor.ID(anchor.GlobalIdentity)
	default:
		a.Kind, a.Path = string(domain.AnchorWorktree), loc.Worktree
		a.ParentID = anchor.ID(loc.Identity(domain.AnchorRepo))
	}
	return a
}
