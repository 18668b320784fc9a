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

// Context assembly defaults (see package pack).
const (
	DefaultBudget       = pack.DefaultBudget
	DefaultDaoTianLimit = pack.DefaultDaoTianLimit
	CandidateLimit      = pack.CandidateLimit
	MaxInstructions     = pack.MaxInstructions
	MaxInstructionRunes = pack.MaxInstructionRunes
	DistillMinEvidence  = pack.DistillMinEvidence
	MaxTriggerLineBytes = pack.MaxTriggerLineBytes
	MaxTriggerMatches   = pack.MaxTriggerMatches
)

// How a rendering tells its reader to fetch a card.
const (
	FetchByCLI     = pack.FetchByCLI
	FetchByMCPTool = pack.FetchByMCPTool
)

// Request and result types of Context, Brief, Hints and the trigger
// matcher; package pack documents each.
type (
	AnchorRef         = pack.AnchorRef
	Brief             = pack.Brief
	BriefAction       = pack.BriefAction
	BriefCard         = pack.BriefCard
	BriefCue          = pack.BriefCue
	BriefEntity       = pack.BriefEntity
	BriefEvidence     = pack.BriefEvidence
	BriefFact         = pack.BriefFact
	BriefRequest      = pack.BriefRequest
	BriefSignal       = pack.BriefSignal
	BudgetAction      = pack.BudgetAction
	BudgetUse         = pack.BudgetUse
	CardFetch         = pack.CardFetch
	Citation          = pack.Citation
	ContextRequest    = pack.ContextRequest
	DistillSuggestion = pack.DistillSuggestion
	EvidenceItem      = pack.EvidenceItem
	Hints             = pack.Hints
	HintsRequest      = pack.HintsRequest
	InvalidTrigger    = pack.InvalidTrigger
	Item              = pack.Item
	MatchCache        = pack.MatchCache
	MemoryElsewhere   = pack.MemoryElsewhere
	MemoryExists      = pack.MemoryExists
	Pack              = pack.Pack
	PackPolicy        = pack.PackPolicy
	PackRequest       = pack.PackRequest
	Section           = pack.Section
	Selection         = pack.Selection
	SkippedCard       = pack.SkippedCard
	TriggerCard       = pack.TriggerCard
	TriggerMatch      = pack.TriggerMatch
	TriggerSet        = pack.TriggerSet
)

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
			g := h.evaluateGate(ctx, c, links, nil, string(domain.ActionPromote), string(target), "", false)
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
func (h *Host) Context(ctx context.Context, req ContextRequest) (Pack, error) {
	if req.AllRepos {
		if err := h.crossRepoRead(ctx); err != nil {
			return Pack{}, err
		}
	}
	return h.pack.Context(ctx, req)
}

// Brief builds the brief of req on the context selection (see
// pack.Pipeline.Brief). It writes nothing. AllRepos is as for Context.
func (h *Host) Brief(ctx context.Context, req BriefRequest) (Brief, error) {
	if req.AllRepos {
		if err := h.crossRepoRead(ctx); err != nil {
			return Brief{}, err
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
func (h *Host) CompileTriggers(ctx context.Context, prev *TriggerSet) (*TriggerSet, error) {
	return h.pack.CompileTriggers(ctx, prev)
}

// Hints matches set's trigger patterns against req.Text and keeps the
// matches whose card applies to req.File (see pack.Pipeline.Hints).
func (h *Host) Hints(ctx context.Context, set *TriggerSet, req HintsRequest) (Hints, error) {
	return h.pack.Hints(ctx, set, req)
}

// TaggedCards returns the cards of set tagged with word that apply to
// req.File (see pack.Pipeline.TaggedCards).
func (h *Host) TaggedCards(ctx context.Context, set *TriggerSet, req HintsRequest, word string) ([]TriggerCard, error) {
	return h.pack.TaggedCards(ctx, set, req, word)
}
