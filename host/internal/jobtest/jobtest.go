// Package jobtest is the shared fixture of the host jobs' tests: a real
// palace (the SQLite file) in a temporary directory, a workspace (the
// global anchor alone, or a git checkout with an origin), a clock the test
// moves, the embedded default policies and the door for authority, so each
// job package tests itself against the same parts host lends it. Only test
// files import it; it must not import host or any job.
package jobtest

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/palacehq/palace/anchor"
	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/authority"
	"github.com/palacehq/palace/host/gatekeep"
	"github.com/palacehq/palace/host/jobenv"
	"github.com/palacehq/palace/policies"
	"github.com/palacehq/palace/store"
)

// Start is the fixture clock's first reading.
var Start = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// Fixture is one palace and workspace for a test.
type Fixture struct {
	jobenv.Env
	// Dir is the workspace: a git checkout with Options.Git, else a plain
	// directory. Home holds palace.db.
	Dir, Home string
	// Clock is what Env.Now returns; Advance moves it.
	Clock time.Time
}

// Options shape a fixture. The zero value is a human in a directory
// outside git.
type Options struct {
	// Git makes Dir a git checkout whose origin is Remote (default
	// "https://github.com/acme/widgets.git"), with one commit.
	Git    bool
	Remote string
	// Agent runs the fixture in agent mode (actor "bot"); else a human
	// "ana".
	Agent bool
}

// New opens a fresh palace for t; it is closed when t ends.
func New(t testing.TB, opts Options) *Fixture {
	t.Helper()
	ctx := context.Background()
	root := t.TempDir()
	f := &Fixture{Dir: filepath.Join(root, "work"), Home: filepath.Join(root, "home"), Clock: Start}
	for _, d := range []string{f.Dir, f.Home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if opts.Git {
		remote := cmp.Or(opts.Remote, "https://github.com/acme/widgets.git")
		Git(t, f.Dir, "init", "-q", "-b", "main")
		Git(t, f.Dir, "remote", "add", "origin", remote)
		if err := os.WriteFile(filepath.Join(f.Dir, "README.md"), []byte("widgets\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		Git(t, f.Dir, "add", "-A")
		Git(t, f.Dir, "commit", "-q", "-m", "first")
	}
	loc, err := anchor.Resolve(ctx, f.Dir)
	if err != nil {
		t.Fatalf("resolve workspace %s: %v", f.Dir, err)
	}
	st, err := store.Open(ctx, filepath.Join(f.Home, "palace.db"))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	set, err := policies.LoadDefaults(ctx, policies.Options{})
	if err != nil {
		t.Fatalf("load default policies: %v", err)
	}
	f.Env = jobenv.Env{Store: st, Loc: loc, Mode: "human", Actor: "ana", Now: func() time.Time { return f.Clock },
		Policies: func(context.Context) (*policies.Set, error) { return set, nil }}
	if opts.Agent {
		f.Mode, f.Actor = "agent", "bot"
	}
	return f
}

// Advance moves the clock by d.
func (f *Fixture) Advance(d time.Duration) { f.Clock = f.Clock.Add(d) }

// Keeper is the gate over the fixture's palace.
func (f *Fixture) Keeper() *gatekeep.Keeper { return &gatekeep.Keeper{Env: f.Env} }

// Door is the one door for authority over the fixture's palace.
func (f *Fixture) Door() *authority.Door { return authority.New(f.Keeper(), f.EnsureAnchor) }

// Evidence records one piece of a person's evidence at the anchor of kind
// k and returns it.
func (f *Fixture) Evidence(t testing.TB, k domain.AnchorKind, content string) domain.Evidence {
	t.Helper()
	return f.EvidenceFrom(t, k, domain.ProvenanceHuman, content)
}

// EvidenceFrom records one piece of evidence of provenance p at the anchor
// of kind k and returns it.
func (f *Fixture) EvidenceFrom(t testing.TB, k domain.AnchorKind, p domain.Provenance, content string) domain.Evidence {
	t.Helper()
	ctx := context.Background()
	var ev domain.Evidence
	err := f.Store.Tx(ctx, func(tx *store.Tx) error {
		a, err := f.EnsureAnchor(ctx, tx, k)
		if err != nil {
			return err
		}
		sum := sha256.Sum256([]byte(content))
		ev = domain.Evidence{ID: store.NewID(store.EvidencePrefix, f.Now()), AnchorID: a.ID, Content: content, Domain: domainAt(k), Field: "general", Provenance: p,
			ContentSHA256: hex.EncodeToString(sum[:]), Actor: f.Actor, ActorType: domain.ActorType(f.Mode), CreatedAt: store.FormatTime(f.Now())}
		return tx.InsertEvidence(ctx, ev)
	})
	if err != nil {
		t.Fatalf("record evidence: %v", err)
	}
	return ev
}

// Apply hands ch to the door in one transaction and returns its outcome.
func (f *Fixture) Apply(t testing.TB, ch authority.Change) authority.Outcome {
	t.Helper()
	ctx := context.Background()
	var out authority.Outcome
	err := f.Store.Tx(ctx, func(tx *store.Tx) error {
		var err error
		out, err = f.Door().Apply(ctx, tx, ch)
		return err
	})
	if err != nil {
		t.Fatalf("apply %s: %v", ch.Op, err)
	}
	return out
}

// Git runs git in dir with a fixed identity and no user configuration.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null",
		"GIT_AUTHOR_NAME=Ana", "GIT_AUTHOR_EMAIL=ana@example.com", "GIT_COMMITTER_NAME=Ana", "GIT_COMMITTER_EMAIL=ana@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// Card is a card to seed: Statement and Tier are required; the rest
// default (status candidate, domain project (global at the global
// anchor, as intake decides), field general, the innermost anchor, one
// piece of supporting evidence recorded for it).
type Card struct {
	Statement string
	Tier      domain.Tier
	// Status candidate goes through create; promoted or canonical is a
	// person's direct write (human mode only).
	Status  domain.Status
	Anchor  domain.AnchorKind
	Field   string
	Scope   domain.Scope
	Trigger domain.Trigger
	// Supporting evidence ids; when empty one piece is recorded.
	Supporting []string
}

// Seed writes c through the door and returns the card as stored.
func (f *Fixture) Seed(t testing.TB, c Card) domain.Card {
	t.Helper()
	c.Anchor = cmp.Or(c.Anchor, f.Loc.Innermost())
	c.Status = cmp.Or(c.Status, domain.StatusCandidate)
	c.Field = cmp.Or(c.Field, "general")
	if len(c.Supporting) == 0 {
		c.Supporting = []string{f.Evidence(t, c.Anchor, "seen: "+c.Statement).ID}
	}
	now := store.FormatTime(f.Now())
	card := domain.Card{ID: store.NewID(store.CardPrefix, f.Now()), Statement: c.Statement, StatementNorm: domain.NormalizeStatement(c.Statement), Tier: c.Tier, Status: c.Status,
		Domain: domainAt(c.Anchor), Field: c.Field, AnchorID: anchor.ID(f.Loc.Identity(c.Anchor)), Scope: c.Scope, Trigger: c.Trigger,
		Persistence: domain.PersistenceStandard, RenderPref: domain.RenderAuto, CreatedBy: f.Actor, CreatedAt: now, UpdatedAt: now}
	op := authority.OpCreate
	if c.Status != domain.StatusCandidate {
		op = authority.OpDirect
	}
	out := f.Apply(t, authority.Change{Op: op, Card: &card, Refs: []authority.Refs{{Role: domain.RoleSupporting, IDs: c.Supporting}}, Reason: "seeded by the test"})
	return out.Card
}

// domainAt is the domain intake gives what is recorded at an anchor of
// kind k: global at the global anchor, project elsewhere.
func domainAt(k domain.AnchorKind) domain.Domain {
	if k == domain.AnchorGlobal {
		return domain.DomainGlobal
	}
	return domain.DomainProject
}
