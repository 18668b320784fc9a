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
