// Package teamsync owns team memory in git: `palace sync` exports a
// repository's authoritative and shared cards to <worktree>/.palace/cards and
// imports committed files (from git objects, never the working tree) with
// their provenance; also the export after a lifecycle change, the pre-commit
// check of card files, and the held cards. It must not import host and
// decides no change itself: every card a file brings goes through
// host/authority, which asks the gate. Only repository cards are written.
package teamsync

import (
	"context"
	"time"

	"github.com/palacehq/palace/anchor"
	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/authority"
	"github.com/palacehq/palace/host/cardview"
	"github.com/palacehq/palace/host/gatekeep"
	"github.com/palacehq/palace/host/jobenv"
	"github.com/palacehq/palace/internal/hosterr"
	"github.com/palacehq/palace/store"
)

// Config is what team memory needs of a palace.
type Config struct {
	jobenv.Env
	// Gate evaluates claims of authority and stamps events with who acts,
	// in which mode, and when.
	Gate *gatekeep.Keeper
	// EnsureAnchor writes the anchor of a kind at Loc, with its parents.
	EnsureAnchor func(context.Context, *store.Tx, domain.AnchorKind) (store.Anchor, error)
	// Door decides and writes what a card file changes; nil for the check
	// of card files, which writes nothing.
	Door *authority.Door
}

// Team syncs one checkout's card files with the palace.
type Team struct {
	store        *store.Store
	loc          anchor.Location
	gate         *gatekeep.Keeper
	now          func() time.Time
	actor        string
	ensureAnchor func(context.Context, *store.Tx, domain.AnchorKind) (store.Anchor, error)
	door         *authority.Door
}

// New is the team memory of c.Loc's checkout.
func New(c Config) *Team {
	return &Team{store: c.Store, loc: c.Loc, gate: c.Gate, now: c.Gate.Now, actor: c.Gate.Actor, ensureAnchor: c.EnsureAnchor, door: c.Door}
}

// GateResult is the gate's answer (see gatekeep.Result).
type GateResult = gatekeep.Result

func (h *Team) anchorRef(ctx context.Context, id string) cardview.AnchorRef {
	return cardview.RefOf(ctx, h.store, h.loc, id)
}

// The error type, kinds and helpers under host's names.
type Error = hosterr.Error

// KindInvalid is bad input (exit 2).
const KindInvalid = hosterr.KindInvalid

func invalid(field, format string, args ...any) error {
	return hosterr.Invalid(field, format, args...)
}

func internal(err error, format string, args ...any) error {
	return hosterr.Internal(err, format, args...)
}

// AnchorID is the id of the anchor with this identity.
func AnchorID(identity string) string { return anchor.ID(identity) }
