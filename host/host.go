// Package host is palace's façade: a Host owns the store, the policy
// engine and the workspace, and offers every operation the CLI, LSP and MCP
// server offer. It keeps the lifecycle changes; the jobs below it
// (host/pack, teamsync, intake, mail, research, adoption, audit, ...)
// never import host. host decides, store persists, policies evaluates: host
// speaks no SQL, Rego or flags.
package host

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/palacehq/palace/anchor"
	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/intake"
	"github.com/palacehq/palace/host/pack"
	"github.com/palacehq/palace/host/policyfile"
	"github.com/palacehq/palace/host/staleness"
	"github.com/palacehq/palace/policies"
	"github.com/palacehq/palace/store"
)

// HomeEnv overrides the default home directory.
const HomeEnv = "PALACE_HOME"

// Options configure Open. The zero value opens ~/.palace from the current
// directory in human mode.
type Options struct {
	// Home is the palace home directory. Defaults to $PALACE_HOME, else ~/.palace.
	Home string
	// Cwd is the directory whose anchors apply. Defaults to the process's.
	Cwd string
	// Mode is fixed for the Host's life. Defaults to Human; callers resolve it
	// with ResolveMode first.
	Mode Mode
	// Actor names who acts. Defaults to the OS user (human) or $PALACE_AGENT (agent).
	Actor string
	// Now is the clock. Defaults to time.Now; tests fix it.
	Now func() time.Time
	// PolicyTimeout bounds each policy evaluation. Defaults to policies.DefaultTimeout.
	PolicyTimeout time.Duration
	// TelemetryDays is how many days raw context-request telemetry is kept.
	// Defaults to $PALACE_TELEMETRY_DAYS, else DefaultTelemetryDays.
	TelemetryDays int
	// DeferCreate creates the database with the first write, so a client
	// that only reads leaves no file behind.
	DeferCreate bool
}

// Host is an open palace. It is safe for concurrent use.
type Host struct {
	home  string
	mode  Mode
	actor string
	now   func() time.Time
	loc   anchor.Location
	store *store.Store

	// echo remembers this Host's renderings so Record can refuse them.
	echo intake.EchoGuard

	policyTimeout time.Duration
	// telemetryDays is the retention of raw request records.
	telemetryDays int
	// policyMu guards the current policy set; a watcher may swap it.
	policyMu  sync.RWMutex
	policySet *policies.Set
	policyErr error
	// fileStates caches how git sees repo policy files, for packs.
	fileStates policyfile.Cache

	// pack assembles context packs, briefs and hints; set by Open.
	pack *pack.Pipeline
	// freshness looks at the code cards cite, keeping each cited file's
	// state by identity for the Host's life.
	freshness *staleness.Checker
}

// DefaultHome is $PALACE_HOME or ~/.palace.
func DefaultHome() (string, error) {
	if h := os.Getenv(HomeEnv); h != "" {
		return h, nil
	}
	dir, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find home directory (set %s): %w", HomeEnv, err)
	}
	return filepath.Join(dir, ".palace"), nil
}

// Open opens the palace at opts.Home (creating it if needed), migrating the
// database, and resolves the anchors of opts.Cwd. A database written by a
// newer palace is refused (KindInternal, wrapping store.ErrSchemaTooNew).
func Open(ctx context.Context, opts Options) (*Host, error) {
	h, err := newHost(ctx, opts)
	if err != nil {
		return nil, err
	}
	open := store.Open
	if opts.DeferCreate {
		open = store.OpenDeferred
	}
	st, err := open(ctx, filepath.Join(h.home, "palace.db"))
	if err != nil {
		return nil, internal(err, "open palace at %s", h.home)
	}
	h.store = st
	root := ""
	if h.loc.InGit {
		root = h.loc.Worktree
	}
	h.freshness = staleness.NewChecker(root)
	if err := h.reconcileRepo(ctx); err != nil {
		st.Close()
		return nil, err
	}
	h.pack = h.newPipeline()
	return h, nil
}

// reconcileRepo settles the repository's identity against the palace's
// anchors (anchor.Location.Reconcile).
func (h *Host) reconcileRepo(ctx context.Context) error {
	if !h.loc.InGit || !anchor.FoldsCase(h.loc.RepoIdentity) {
		return nil
	}
	known, err := h.store.RepoIdentitiesFolded(ctx, h.loc.RepoIdentity)
	if err != nil {
		return internal(err, "open palace at %s", h.home)
	}
	h.loc = h.loc.Reconcile(known)
	return nil
}

func newHost(ctx context.Context, opts Options) (*Host, error) {
	home := opts.Home
	if home == "" {
		var err error
		if home, err = DefaultHome(); err != nil {
			return nil, internal(err, "open palace")
		}
	}
	if err := unexpandedHome(home, opts.Home != ""); err != nil {
		return nil, err
	}
	home, err := filepath.Abs(home)
	if err != nil {
		return nil, internal(err, "open palace at %s", opts.Home)
	}
	if err := checkHome(home, opts.Home != ""); err != nil {
		return nil, err
	}
	cwd := opts.Cwd
	if cwd == "" {
		if cwd, err = os.Getwd(); err != nil {
			return nil, internal(err, "read current directory")
		}
	}
	loc, err := anchor.Resolve(ctx, cwd)
	if err != nil {
		if errors.Is(err, anchor.ErrNoDir) {
			return nil, invalid("--cwd", "directory %s does not exist: pass an existing --cwd", cwd)
		}
		return nil, internal(err, "resolve anchors of %s", cwd)
	}
	mode := cmp.Or(opts.Mode, Human)
	actor := opts.Actor
	if actor == "" {
		actor = defaultActor(mode)
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	days, err := telemetryDays(opts.TelemetryDays)
	if err != nil {
		return nil, err
	}
	return &Host{home: home, mode: mode, actor: actor, now: now, loc: loc, policyTimeout: opts.PolicyTimeout, telemetryDays: days}, nil
}

// Close releases the database.
func (h *Host) Close() error {
	if h.store == nil {
		return nil
	}
	return h.store.Close()
}

// Home is the palace home directory.
func (h *Host) Home() string { return h.home }

// Mode is the process mode.
func (h *Host) Mode() Mode { return h.mode }

// Actor is who acts through this Host.
func (h *Host) Actor() string { return h.actor }

// Location is the resolved workspace location.
func (h *Host) Location() anchor.Location { return h.loc }

func (h *Host) actorType() domain.ActorType { return domain.ActorType(h.mode) }

func (h *Host) stamp() string { return store.FormatTime(h.now()) }

// AnchorID is the id of the anchor with this identity: "an_" + 16 hex of its sha256.
func AnchorID(identity string) string { return anchor.ID(identity) }

// ensureAnchor writes the anchor of kind k and its parents, returning its row.
func (h *Host) ensureAnchor(ctx context.Context, tx *store.Tx, k domain.AnchorKind) (store.Anchor, error) {
	return h.env().EnsureAnchor(ctx, tx, k)
}

// resolveAnchorKind validates a requested anchor kind ("" = innermost).
func (h *Host) resolveAnchorKind(field, s string) (domain.AnchorKind, error) {
	return intake.ResolveAnchorKind(h.loc, field, s)
}

// unexpandedHome refuses a home holding a "~" or "$" no shell expanded (a
// JSON config passes "~/.palace" as written), which would silently create a
// folder of that name and serve an empty palace.
func unexpandedHome(home string, fromFlag bool) error {
	bad := ""
	switch {
	case strings.Contains(home, "$"):
		bad = "$"
	case strings.HasPrefix(home, "~") || strings.Contains(home, string(filepath.Separator)+"~"):
		bad = "~"
	}
	if bad == "" {
		return nil
	}
	if fromFlag {
		return invalid("home", "--home %q holds a literal %q that was not expanded: pass an absolute path", home, bad)
	}
	return invalid("home", "%s=%q holds a literal %q that was not expanded (the program that started palace passed it as written): set %s to an absolute path, or leave it unset for ~/.palace", HomeEnv, home, bad, HomeEnv)
}

// checkHome refuses a home that exists but is not a directory (a file, or a
// link to one): palace would fail later with a storage error.
func checkHome(home string, fromFlag bool) error {
	fi, err := os.Stat(home)
	if err != nil || fi.IsDir() {
		return nil // missing homes are created; other errors surface on open
	}
	if fromFlag {
		return invalid("home", "--home %s is not a directory: pass a directory (palace creates it when missing)", home)
	}
	if os.Getenv(HomeEnv) == "" {
		return invalid("home", "the default home %s is not a directory: move the file away, or pass --home DIR", home)
	}
	return invalid("home", "%s %s is not a directory: point %s at a directory (palace creates it when missing), or pass --home", HomeEnv, home, HomeEnv)
}
