// Package pack assembles what palace puts in front of an agent: context
// packs, briefs and trigger hints — candidate selection, the relevance
// model, the scope and lanes decisions and what the pack does with them
// (cooling, contests, the dao_tian limit, ordering), the budget, rendering,
// and the request telemetry that feeds cooling.
//
// It reads the store and asks the policy set in force; it must not write
// cards, evidence or events (host's lifecycle), speak SQL (store's) or
// evaluate Rego or WebAssembly (policies'). What it needs of the palace it
// gets through Config, so host imports pack and never the other way round.
package pack

import (
	"context"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/cardview"
	"github.com/palacehq/palace/host/jobenv"
	"github.com/palacehq/palace/host/staleness"
	"github.com/palacehq/palace/internal/hosterr"
	"github.com/palacehq/palace/policies"
	"github.com/palacehq/palace/store"
)

// Config is what a Pipeline needs of the palace it serves. Every field but
// Freshness is required.
type Config struct {
	jobenv.Env
	// StampFileState fills in how git sees the policy file that took a
	// decision; it runs on every context request, so it should cache.
	StampFileState func(context.Context, *policies.Decision)
	// Remember keeps a rendering so the echo guard can refuse it when it
	// comes back as evidence.
	Remember func(rendered string)
	// PromoteGate evaluates the gate (policy and floors) for promoting a
	// candidate to its default target, for the brief's next actions.
	PromoteGate func(ctx context.Context, c domain.Card, links []domain.Link) (allow bool, missing map[string]int)
	// TelemetryCutoff is the oldest time whose raw request records are
	// kept.
	TelemetryCutoff func() string
	// Freshness looks at the code cards cite (nil: none is looked at).
	Freshness *staleness.Checker
	// CrossRepoRead says whether a request may read every repository's
	// memory (AllRepos); its error is returned as is. Nil allows it.
	CrossRepoRead func(context.Context) error
}

// Pipeline serves packs, briefs and hints for one palace and workspace.
// It is safe for concurrent use.
type Pipeline struct{ Config }

// New returns the pipeline of cfg.
func New(cfg Config) *Pipeline { return &Pipeline{cfg} }

func (pl *Pipeline) stamp() string { return store.FormatTime(pl.Now()) }

// allowAllRepos refuses a cross-repository read the host has not allowed.
func (pl *Pipeline) allowAllRepos(ctx context.Context, all bool) error {
	if !all || pl.CrossRepoRead == nil {
		return nil
	}
	return pl.CrossRepoRead(ctx)
}

func (pl *Pipeline) anchorRef(ctx context.Context, id string) cardview.AnchorRef {
	return cardview.RefOf(ctx, pl.Store, pl.Loc, id)
}

// openContests reads the open contests of cards (keyed by card id); a
// failure is KindInternal.
func (pl *Pipeline) openContests(ctx context.Context, ids []string) (map[string][]store.Contest, error) {
	m, err := pl.Store.OpenContests(ctx, ids)
	if err != nil {
		return nil, hosterr.Internal(err, "read contests")
	}
	return m, nil
}
