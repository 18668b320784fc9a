// Package teamsync owns team memory in git: `palace sync` exports a
// repository's authoritative (and shared) cards to files under
// <worktree>/.palace/cards and imports the committed files a pull or a
// merge brings — read from git objects, never from the working tree —
// with where each comes from (the commit that last changed it, and whether
// the upstream default branch holds it); the automatic export after a
// lifecycle change; the pre-commit check of card files; and the held cards
// an import refused.
//
// It takes what it needs of a palace (store, workspace, the gate's stamps,
// how anchors are written, the door) through a Config that host fills in.
// It must not import host, and it decides no change itself: every card a
// file brings goes through host/authority (DecideImport, WriteImports),
// which asks the gate. Worktree cards never leave the machine and global
// cards stay personal: only the repository's cards are written.
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

// The error type, kinds and helpers under the names host uses, so the code
// that moved here from host reads the same in both places.
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
