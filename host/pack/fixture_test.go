package pack_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/palacehq/palace/anchor"
	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/authority"
	"github.com/palacehq/palace/host/gatekeep"
	"github.com/palacehq/palace/host/internal/jobtest"
	"github.com/palacehq/palace/host/pack"
	"github.com/palacehq/palace/host/policyfile"
	"github.com/palacehq/palace/host/staleness"
	"github.com/palacehq/palace/store"
)

// fixture is a jobtest palace with the pipeline host would build over it
// (see host.newPipeline): the real gate, the policy file cache, a
// freshness checker at the workspace and a 30-day telemetry window.
type fixture struct {
	*jobtest.Fixture
	pl *pack.Pipeline
	// remembered are the renderings handed to the echo guard.
	remembered []string
}

// build makes the pipeline host would make over fx.
func (fx *fixture) build() {
	var files policyfile.Cache
	fx.pl = pack.New(pack.Config{
		Env:            fx.Env,
		StampFileState: files.StampCached,
		Remember:       func(s string) { fx.remembered = append(fx.remembered, s) },
		PromoteGate: func(ctx context.Context, c domain.Card, links []domain.Link) (bool, map[string]int) {
			k := fx.Keeper()
			target, _ := gatekeep.PromoteTarget(c, "")
			g := k.Evaluate(ctx, c, links, nil, "promote", string(target), k.Reviewer(""), false)
			return g.Allow, g.Missing
		},
		TelemetryCutoff: func() string {
			return store.FormatTime(fx.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -30))
		},
		Freshness: staleness.NewChecker(fx.Dir),
	})
}

func newFixture(t testing.TB, opts jobtest.Options) *fixture {
	t.Helper()
	f := jobtest.New(t, opts)
	fx := &fixture{Fixture: f}
	fx.build()
	return fx
}

// ev is evidence to record: content is required; the rest default (field
// general, the innermost anchor).
type ev struct {
	content, field, source string
	anchor                 domain.AnchorKind
}

// record writes e at its anchor and returns its id.
func (fx *fixture) record(t testing.TB, e ev) string {
	t.Helper()
	ctx := context.Background()
	if e.anchor == "" {
		e.anchor = fx.Loc.Innermost()
	}
	if e.field == "" {
		e.field = "general"
	}
	var id string
	err := fx.Store.Tx(ctx, func(tx *store.Tx) error {
		a, err := fx.EnsureAnchor(ctx, tx, e.anchor)
		if err != nil {
			return err
		}
		sum := sha256.Sum256([]byte(e.content))
		id = store.NewID("ev", fx.Now())
		at := store.FormatTime(fx.Now())
		if err := tx.InsertEvidence(ctx, domain.Evidence{ID: id, AnchorID: a.ID, Content: e.content, Domain: domain.DomainProject, Field: e.field,
			Provenance: domain.ProvenanceHuman, SourceRef: e.source, ContentSHA256: hex.EncodeToString(sum[:]), Actor: fx.Actor,
			ActorType: domain.ActorType(fx.Mode), CreatedAt: at}); err != nil {
			return err
		}
		// As intake does: evidence of the checkout that cites one of its
		// files records what the file holds now.
		if !fx.Loc.InGit || e.anchor == domain.AnchorGlobal || e.source == "" {
			return nil
		}
		o, ok := staleness.Observe(fx.Loc.Worktree, staleness.Head(ctx, fx.Loc.Worktree), id, e.source, at)
		if !ok {
			return nil
		}
		return tx.InsertObservations(ctx, []domain.Observation{o})
	})
	if err != nil {
		t.Fatalf("record %q: %v", e.content, err)
	}
	return id
}

// spec is a card to write through the door, with what jobtest.Card does
// not carry (content, render preference, persistence, review date).
// Status defaults to promoted (a person's direct write); candidate goes
// through create.
type spec struct {
	statement, content     string
	tier                   domain.Tier
	status                 domain.Status
	anchor                 domain.AnchorKind
	field                  string
	scope                  domain.Scope
	trigger                domain.Trigger
	persistence            domain.Persistence
	renderPref             domain.RenderPref
	reviewAfter, expiresAt string
}

// card writes s with two pieces of evidence (supporting, verification)
// and returns its id.
func (fx *fixture) card(t testing.TB, s spec) string {
	t.Helper()
	if s.anchor == "" {
		s.anchor = fx.Loc.Innermost()
	}
	if s.status == "" {
		s.status = domain.StatusPromoted
	}
	if s.field == "" {
		s.field = "general"
	}
	if s.persistence == "" {
		s.persistence = domain.PersistenceStandard
	}
	if s.renderPref == "" {
		s.renderPref = domain.RenderAuto
	}
	sup := fx.record(t, ev{content: "seen: " + s.statement, field: s.field, source: "src/" + s.field + ".go:1", anchor: s.anchor})
	ver := fx.record(t, ev{content: "verified: " + s.statement, field: s.field, anchor: s.anchor})
	now := store.FormatTime(fx.Now())
	c := domain.Card{ID: store.NewID("card", fx.Now()), Statement: s.statement, StatementNorm: domain.NormalizeStatement(s.statement), Content: s.content, Tier: s.tier, Status: s.status,
		Domain: domain.DomainProject, Field: s.field, AnchorID: anchor.ID(fx.Loc.Identity(s.anchor)), Scope: s.scope, Trigger: s.trigger,
		Persistence: s.persistence, RenderPref: s.renderPref, ReviewAfter: s.reviewAfter, ExpiresAt: s.expiresAt, CreatedBy: fx.Actor, CreatedAt: now, UpdatedAt: now}
	op := authority.OpDirect
	if s.status == domain.StatusCandidate {
		op = authority.OpCreate
	}
	out := fx.Apply(t, authority.Change{Op: op, Card: &c, Reason: "written by the test",
		Refs: []authority.Refs{{Role: domain.RoleSupporting, IDs: []string{sup}}, {Role: domain.RoleVerification, IDs: []string{ver}}}})
	return out.Card.ID
}

// link links evidence to a card in role.
func (fx *fixture) link(t testing.TB, cardID string, role domain.Role, evidenceID string) authority.Outcome {
	t.Helper()
	return fx.Apply(t, authority.Change{Op: authority.OpLink, CardID: cardID, Refs: []authority.Refs{{Role: role, IDs: []string{evidenceID}}}, Reason: "linked by the test"})
}

// scoped is a card that lands in the scoped lane for scopedRequest: path,
// language and field fit plus two intents.
func scoped(statement string, tier domain.Tier) spec {
	return spec{statement: statement, tier: tier, field: "storage",
		scope:   domain.Scope{Paths: []string{"store/**"}, Languages: []string{"go"}, Fields: []string{"storage"}},
		trigger: domain.Trigger{Intents: []string{"debug", "storage"}}}
}

// at returns s anchored at kind.
func (s spec) at(kind domain.AnchorKind) spec { s.anchor = kind; return s }

// scopedRequest is the request scoped cards fit.
func scopedRequest() pack.ContextRequest {
	return pack.ContextRequest{File: "store/store.go", Field: "storage", Intents: []string{"debug", "storage"}, DryRun: true}
}

func (fx *fixture) context(t testing.TB, req pack.ContextRequest) pack.Pack {
	t.Helper()
	p, err := fx.pl.Context(context.Background(), req)
	if err != nil {
		t.Fatalf("context %+v: %v", req, err)
	}
	return p
}

func itemIDs(p pack.Pack) []string {
	out := []string{}
	for _, it := range p.Items {
		out = append(out, it.ID)
	}
	return out
}

func item(p pack.Pack, id string) (pack.Item, bool) {
	for _, it := range p.Items {
		if it.ID == id {
			return it, true
		}
	}
	return pack.Item{}, false
}

// sibling is another checkout (origin remote) sharing fx's palace and
// clock: its cards and evidence live at its own anchors, which fx's
// requests must not see.
func (fx *fixture) sibling(t testing.TB, name, remote string) *fixture {
	t.Helper()
	dir := filepath.Join(filepath.Dir(fx.Dir), name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	jobtest.Git(t, dir, "init", "-q", "-b", "main")
	jobtest.Git(t, dir, "remote", "add", "origin", remote)
	jobtest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "first")
	return fx.at(t, dir)
}

// at is the fixture of the checkout at dir over fx's palace and clock.
func (fx *fixture) at(t testing.TB, dir string) *fixture {
	t.Helper()
	loc, err := anchor.Resolve(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	env := fx.Env
	env.Loc = loc
	o := &fixture{Fixture: &jobtest.Fixture{Env: env, Dir: dir, Home: fx.Home, Clock: fx.Clock}}
	o.build()
	return o
}
