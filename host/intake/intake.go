// Package intake owns what enters a palace as evidence or as a candidate
// built from it: recording evidence (one or a JSON Lines batch), importing
// agent rule files, the checks every such write passes (limits, secrets, the
// echo guard) and validating a card to distill (PrepareCard). It never makes
// a card authoritative and must not import host.
package intake

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
	"github.com/palacehq/palace/internal/limits"
	"github.com/palacehq/palace/store"
)

// Config is what intake needs of a palace.
type Config struct {
	jobenv.Env
	// Gate stamps events with who acts, in which mode, and when.
	Gate *gatekeep.Keeper
	// Echo is the palace's memory of its own renderings.
	Echo *EchoGuard
	// EnsureAnchor writes the anchor of a kind at Loc, with its parents.
	EnsureAnchor func(context.Context, *store.Tx, domain.AnchorKind) (store.Anchor, error)
	// Door writes the candidates and links an import makes.
	Door *authority.Door
}

// Intake writes evidence and candidates into one palace.
type Intake struct {
	store        *store.Store
	loc          anchor.Location
	gate         *gatekeep.Keeper
	echo         *EchoGuard
	mode         string
	actor        string
	now          func() time.Time
	ensureAnchor func(context.Context, *store.Tx, domain.AnchorKind) (store.Anchor, error)
	door         *authority.Door
}

// New is the intake of c's palace.
func New(c Config) *Intake {
	return &Intake{store: c.Store, loc: c.Loc, gate: c.Gate, echo: c.Echo, mode: c.Gate.Mode,
		actor: c.Gate.Actor, now: c.Gate.Now, ensureAnchor: c.EnsureAnchor, door: c.Door}
}

// The two modes, as host names them.
const (
	Human = "human"
	Agent = "agent"
)

// Limits this package applies, as host names them.
const (
	// MaxFieldBytes bounds field (see limits.FieldBytes).
	MaxFieldBytes = limits.FieldBytes
	// MaxJSONLLineBytes bounds one JSON Lines line: 1 MiB of content with
	// every character escaped (\u00XX is six bytes) plus the other fields.
	MaxJSONLLineBytes = 8 << 20
)

// AnchorRef names an anchor in output.
type AnchorRef = cardview.AnchorRef

func (h *Intake) resolveAnchorKind(field, s string) (domain.AnchorKind, error) {
	return ResolveAnchorKind(h.loc, field, s)
}

// ResolveAnchorKind validates a requested anchor kind at loc ("" = the
// innermost).
func ResolveAnchorKind(loc anchor.Location, field, s string) (domain.AnchorKind, error) {
	if s == "" {
		return loc.Innermost(), nil
	}
	k := domain.AnchorKind(s)
	if !k.Valid() {
		return "", invalid(field, "%s %q is not valid: use worktree, repo or global", field, s)
	}
	if !loc.InGit && k != domain.AnchorGlobal {
		return "", invalid(field, "%s %s needs a git checkout, and %s is not inside one: use --anchor global or --cwd inside a repository", field, k, loc.Dir)
	}
	return k, nil
}

// The error type, kinds and helpers under host's names.
type Error = hosterr.Error

func invalid(field, format string, args ...any) error {
	return hosterr.Invalid(field, format, args...)
}

func internal(err error, format string, args ...any) error {
	return hosterr.Internal(err, format, args...)
}

// Error kinds (see hosterr).
const (
	KindInvalid = hosterr.KindInvalid
	KindDenied  = hosterr.KindDenied
	KindMode    = hosterr.KindMode
)

// ModeEnv is the environment variable an agent's environment sets.
const ModeEnv = gatekeep.ModeEnv

func checkEvidenceInput(req RecordRequest) error {
	return limits.CheckEvidence(limits.Evidence{Content: req.Content, Field: req.Field, Domain: req.Domain,
		SourceRef: req.SourceRef, Anchor: req.Anchor, Provenance: req.Provenance, Tags: req.Tags})
}
