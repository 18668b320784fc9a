package host

import (
	"context"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/gatekeep"
	"github.com/palacehq/palace/host/pack"
)

// Context packs, briefs and trigger hints are assembled by package pack;
// host names its request and result types under their old names and
// delegates, so every surface keeps calling host.

// newPipeline binds the pack pipeline to this host's store, workspace,
// clock, policy set, echo guard and gate.
func (h *Host) newPipeline() *pack.Pipeline {
	return pack.New(pack.Config{
		Store:          h.store,
		Loc:            h.loc,
		Now:            h.now,
		Policies:       h.Policies,
		StampFileState: h.stampFileStateCached,
		Remember:       h.echo.Remember,
		PromoteGate: func(ctx context.Context, c domain.Card, links []domain.Link) (bool, map[string]int) {
			target, _ := gatekeep.PromoteTarget(c, "")
			g := h.evaluateGate(ctx, c, links, nil, "promote", string(target), "", false)
			return g.Allow, g.Missing
		},
		TelemetryCutoff: h.telemetryCutoff,
		Freshness:       h.freshness,
	})
}

// Context assembles the context pack for req at the host's location (see
// pack.Pipeline.Context): bad input is KindInvalid and writes nothing,
// storage failures are KindInternal, policy failures never fail it.
// AllRepos in agent mode needs a person's permission for this workspace
// (KindMode otherwise, see SetAllRepos).
func (h *Host) Context(ctx context.Context, req pack.ContextRequest) (pack.Pack, error) {
	if req.AllRepos {
		if err := h.crossRepoRead(ctx); err != nil {
			return pack.Pack{}, err
		}
	}
	return h.pack.Context(ctx, req)
}

// Brief builds the brief of req on the context selection (see
// pack.Pipeline.Brief). It writes nothing. AllRepos is as for Context.
func (h *Host) Brief(ctx context.Context, req pack.BriefRequest) (pack.Brief, error) {
	if req.AllRepos {
		if err := h.crossRepoRead(ctx); err != nil {
			return pack.Brief{}, err
		}
	}
	return h.pack.Brief(ctx, req)
}

// RecordViews records a "viewed" injection event for each card id (see
// pack.Pipeline.RecordViews). Unknown ids are KindInvalid and nothing is
// written.
func (h *Host) RecordViews(ctx context.Context, ids ...string) error {
	return h.pack.RecordViews(ctx, ids...)
}

// CompileTriggers compiles the trigger patterns of the authoritative cards
// visible from here, reusing prev's regexps (see
// pack.Pipeline.CompileTriggers).
func (h *Host) CompileTriggers(ctx context.Context, prev *pack.TriggerSet) (*pack.TriggerSet, error) {
	return h.pack.CompileTriggers(ctx, prev)
}

// Hints matches set's trigger patterns against req.Text and keeps the
// matches whose card applies to req.File (see pack.Pipeline.Hints).
func (h *Host) Hints(ctx context.Context, set *pack.TriggerSet, req pack.HintsRequest) (pack.Hints, error) {
	return h.pack.Hints(ctx, set, req)
}

// TaggedCards returns the cards of set tagged with word that apply to
// req.File (see pack.Pipeline.TaggedCards).
func (h *Host) TaggedCards(ctx context.Context, set *pack.TriggerSet, req pack.HintsRequest, word string) ([]pack.TriggerCard, error) {
	return h.pack.TaggedCards(ctx, set, req, word)
}
