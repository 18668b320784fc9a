package pack_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/authority"
	"github.com/palacehq/palace/host/cardview"
	"github.com/palacehq/palace/host/internal/jobtest"
	"github.com/palacehq/palace/host/pack"
	"github.com/palacehq/palace/internal/hosterr"
)

func TestContextDaoTianLimit(t *testing.T) {
	fx := newFixture(t, jobtest.Options{Git: true})
	d1 := fx.card(t, scoped("dao_tian one: evidence before belief", domain.TierDaoTian))
	d2 := fx.card(t, scoped("dao_tian two: name the uncertainty", domain.TierDaoTian))
	s := fx.card(t, scoped("shu: bisect before guessing", domain.TierShu))
	limit := func(n int) *int { return &n }
	tests := []struct {
		name  string
		limit *int
		want  []string
	}{
		{"default keeps one", nil, []string{d1, s}},
		{"zero removes dao_tian", limit(0), []string{s}},
		{"two keeps both", limit(2), []string{d1, d2, s}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := scopedRequest()
			req.DaoTianLimit = tt.limit
			p := fx.context(t, req)
			if got := itemIDs(p); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("items = %v, want %v", got, tt.want)
			}
			n := 0
			for _, it := range p.Items {
				if it.Tier == domain.TierDaoTian {
					n++
				}
			}
			for _, sk := range p.Skipped {
				if sk.Tier == domain.TierDaoTian && sk.Reason != "dao_tian_limit" {
					t.Errorf("dao_tian %s skipped for %s", sk.ID, sk.Reason)
				}
			}
			if n+len(p.Skipped) != 2 {
				t.Errorf("%d dao_tian items + %d skipped, want 2 in all", n, len(p.Skipped))
			}
		})
	}
	if _, err := fx.pl.Context(context.Background(), pack.ContextRequest{DaoTianLimit: limit(-1)}); hosterr.KindOf(err) != hosterr.KindInvalid {
		t.Errorf("negative limit: err = %v, want invalid input", err)
	}
}

func TestContextStatuses(t *testing.T) {
	fx := newFixture(t, jobtest.Options{Git: true})
	promoted := fx.card(t, scoped("promoted: checkpoint the WAL after imports", domain.TierShu))
	cand := scoped("candidate: vacuum weekly", domain.TierShu)
	cand.status = domain.StatusCandidate
	candidate := fx.card(t, cand)
	demoted := fx.card(t, scoped("demoted: disable fsync for speed", domain.TierShu))
	retired := fx.card(t, scoped("retired: use the old importer", domain.TierShu))
	counter := fx.record(t, ev{content: "fsync off lost data in the crash test", field: "storage", source: "test:crash"})
	fx.Apply(t, authority.Change{Op: authority.OpDemote, CardID: demoted, Target: string(domain.StatusDemoted), Reason: "lost data",
		Refs: []authority.Refs{{Role: domain.RoleCounterexample, IDs: []string{counter}}}})
	fx.Apply(t, authority.Change{Op: authority.OpRetire, CardID: retired, Reason: "importer replaced"})
	tests := []struct {
		name              string
		includeCandidates bool
		want              []string
	}{
		{"authoritative only by default", false, []string{promoted}},
		{"candidates on request, never demoted or retired", true, []string{promoted, candidate}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := scopedRequest()
			req.IncludeCandidates = tt.includeCandidates
			p := fx.context(t, req)
			got := itemIDs(p)
			slices.Sort(got)
			want := slices.Clone(tt.want)
			slices.Sort(want)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("items = %v, want %v", got, want)
			}
			for _, sk := range p.Skipped {
				if sk.ID == demoted || sk.ID == retired {
					t.Errorf("%s (%s) was even considered", sk.ID, sk.Reason)
				}
			}
			if tt.includeCandidates != strings.Contains(p.Rendered, "_(candidate, not yet authoritative)_") {
				t.Errorf("candidate label present = %v, want %v:\n%s", !tt.includeCandidates, tt.includeCandidates, p.Rendered)
			}
			if p.MemoryExists.ByStatus["demoted"] != 1 || p.MemoryExists.ByStatus["retired"] != 1 || p.MemoryExists.Authoritative != 1 {
				t.Errorf("memory_exists = %+v, want one demoted, one retired, one authoritative", p.MemoryExists)
			}
		})
	}
}

func TestContextBadInput(t *testing.T) {
	fx := newFixture(t, jobtest.Options{Git: true})
	tests := []struct {
		name  string
		req   pack.ContextRequest
		field string
	}{
		{"negative budget", pack.ContextRequest{Budget: -1}, "budget"},
		{"huge instruction", pack.ContextRequest{Instructions: []string{strings.Repeat("x", pack.MaxInstructionRunes+1)}}, "instruction"},
		{"invalid utf-8 instruction", pack.ContextRequest{Instructions: []string{"\xff"}}, "instruction"},
		{"too many instructions", pack.ContextRequest{Instructions: make([]string, pack.MaxInstructions+1)}, "instruction"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := fx.pl.Context(context.Background(), tt.req)
			var he *hosterr.Error
			if !errors.As(err, &he) || he.Kind != hosterr.KindInvalid || he.Field != tt.field {
				t.Fatalf("err = %v, want invalid %s", err, tt.field)
			}
		})
	}
	// FTS5 syntax in a query is just words.
	if _, err := fx.pl.Context(context.Background(), pack.ContextRequest{Query: `"unbalanced AND (NEAR OR* -x`, DryRun: true}); err != nil {
		t.Errorf("a query with FTS5 operators failed: %v", err)
	}
	// A file of another checkout is not this request's.
	other := fx.sibling(t, "other", "https://github.com/acme/other.git")
	_, err := fx.pl.Context(context.Background(), pack.ContextRequest{File: other.Dir + "/main.go", DryRun: true})
	if !errors.Is(err, pack.ErrOtherCheckout) || hosterr.KindOf(err) != hosterr.KindInvalid {
		t.Errorf("a file of another checkout: err = %v, want ErrOtherCheckout", err)
	}
}

func TestContextDistillSuggestions(t *testing.T) {
	fx := newFixture(t, jobtest.Options{Git: true})
	var xs []string
	for i := range 5 {
		xs = append(xs, fx.record(t, ev{content: fmt.Sprint("import stalls ", i), field: "x"}))
	}
	for i := range 4 {
		fx.record(t, ev{content: fmt.Sprint("y note ", i), field: "y"})
	}
	for i := range 5 {
		fx.record(t, ev{content: fmt.Sprint("z note ", i), field: "z"})
	}
	fx.card(t, spec{statement: "z is settled", tier: domain.TierQi, field: "z"}) // 2 more z rows, and a card
	p := fx.context(t, pack.ContextRequest{DryRun: true})
	if len(p.DistillSuggestions) != 1 {
		t.Fatalf("suggestions = %+v, want one for x", p.DistillSuggestions)
	}
	s := p.DistillSuggestions[0]
	if s.Field != "x" || s.EvidenceCount != 5 || len(s.SampleIDs) != 3 || !slices.Contains(xs, s.SampleIDs[0]) ||
		!strings.Contains(s.Command, "--field x") || s.SuggestedTier != "dao_ren" {
		t.Errorf("suggestion = %+v", s)
	}
}

// TestContextNeverLeaksAnotherRepository: a request sees its own
// checkout's anchors only; AllRepos shows every repository's cards,
// labelled and grouped by origin, and the host may refuse it.
func TestContextNeverLeaksAnotherRepository(t *testing.T) {
	ctx := context.Background()
	fx := newFixture(t, jobtest.Options{Git: true, Remote: "https://github.com/acme/a"})
	b := fx.sibling(t, "b", "git@github.com:acme/b.git")
	ca := fx.card(t, scoped("A stores with WAL", domain.TierShu))
	bRepo := b.card(t, scoped("B stores with a rollback journal", domain.TierShu).at(domain.AnchorRepo))
	bTree := b.card(t, scoped("B keeps a worktree note", domain.TierQi))
	b.record(t, ev{content: "B evidence about storage locks", field: "storage", source: "b/store.go:1"})

	req := scopedRequest()
	req.Query = "storage journal locks"
	req.IncludeEvidence = true
	p := fx.context(t, req)
	if got := itemIDs(p); !reflect.DeepEqual(got, []string{ca}) {
		t.Fatalf("items in A = %v, want only A's card %s", got, ca)
	}
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{bRepo, bTree, "acme/b", "B evidence", "rollback"} {
		if strings.Contains(string(raw), leak) {
			t.Errorf("A's pack mentions %q from repository B", leak)
		}
	}
	if p.MemoryExists.Cards != 1 {
		t.Errorf("memory_exists.cards = %d, want 1 (B's cards are not counted as here)", p.MemoryExists.Cards)
	}

	req.AllRepos = true
	p = fx.context(t, req)
	for _, id := range []string{ca, bRepo, bTree} {
		if _, ok := item(p, id); !ok {
			t.Errorf("all-repos pack lacks %s: items %v", id, itemIDs(p))
		}
	}
	it, _ := item(p, bRepo)
	if !it.Foreign || it.Anchor.Kind != "repo" || it.Anchor.Identity != "repo:github.com/acme/b" {
		t.Errorf("B's repo card is labelled %+v foreign=%v, want repo:github.com/acme/b, foreign", it.Anchor, it.Foreign)
	}
	if own, _ := item(p, ca); own.Foreign {
		t.Error("A's own card is labelled foreign")
	}
	var origins []string
	for _, s := range p.Sections {
		if s.Origin != nil {
			origins = append(origins, s.Origin.Identity)
		}
	}
	if !slices.Contains(origins, "repo:github.com/acme/b") || len(origins) != 2 {
		t.Errorf("origin sections = %v, want B's repo and B's worktree", origins)
	}
	if !strings.Contains(p.Rendered, "## From repo github.com/acme/b") {
		t.Errorf("rendered does not group by origin:\n%s", p.Rendered)
	}

	// The host's refusal of a cross-repository read is returned as is.
	refused := errors.New("cross-repository reads are off")
	pl := pack.New(pack.Config{Env: fx.Env, Remember: func(string) {}, CrossRepoRead: func(context.Context) error { return refused }})
	if _, err := pl.Context(ctx, req); !errors.Is(err, refused) {
		t.Errorf("refused all-repos: err = %v, want the host's", err)
	}
}

// laneRank is the order of lanes in a pack.
var laneRank = map[domain.Lane]int{domain.LaneCore: 0, domain.LaneScoped: 1, domain.LaneRefOnly: 2, domain.LaneInspectorOnly: 3}

// TestContextOrdersByValueThenTierThenInnermostAnchor: inside a lane
// items go by salience, then relevance; a worktree's card is seen from it
// only.
func TestContextOrdersByValueThenTierThenInnermostAnchor(t *testing.T) {
	fx := newFixture(t, jobtest.Options{Git: true})
	g := fx.card(t, scoped("global: keep migrations forward-only", domain.TierDaoRen).at(domain.AnchorGlobal))
	r := fx.card(t, scoped("repo: run the store tests with -race", domain.TierShu).at(domain.AnchorRepo))
	w := fx.card(t, scoped("worktree: this branch rewrites the FTS triggers", domain.TierShu))
	dr := fx.card(t, scoped("repo: storage changes need a migration", domain.TierDaoRen).at(domain.AnchorRepo))
	p := fx.context(t, scopedRequest())
	for i := 1; i < len(p.Items); i++ {
		x, y := p.Items[i-1], p.Items[i]
		if x.Lane == y.Lane && (x.Salience < y.Salience || x.Salience == y.Salience && x.Relevance < y.Relevance) {
			t.Errorf("item %d (%s, salience %d, relevance %v) before a more valuable one (%s, %d, %v)", i-1, x.ID, x.Salience, x.Relevance, y.ID, y.Salience, y.Relevance)
		}
		if laneRank[x.Lane] > laneRank[y.Lane] {
			t.Errorf("item %d in lane %s before one in lane %s", i-1, x.Lane, y.Lane)
		}
	}
	if got := itemIDs(p); len(got) != 4 {
		t.Errorf("items %v, want all four of %v", got, []string{dr, w, r, g})
	}
	kinds := map[string]string{g: "global", r: "repo", w: "worktree", dr: "repo"}
	for id, k := range kinds {
		if it, _ := item(p, id); it.Anchor.Kind != k {
			t.Errorf("%s: anchor %+v, want %s", id, it.Anchor, k)
		}
	}
	// A second worktree of the same repository shares the repo anchor but
	// not the first worktree's.
	wt := fx.Dir + "-wt"
	jobtest.Git(t, fx.Dir, "worktree", "add", "-q", "-b", "wt", wt)
	other := fx.at(t, wt)
	p = other.context(t, scopedRequest())
	if got := itemIDs(p); len(got) != 3 || slices.Contains(got, w) {
		t.Errorf("from the other worktree: %v, want %v without %s", got, []string{dr, r, g}, w)
	}
}

// TestContextTransientInstructionFirstAndNeverStored: an instruction
// renders as the first section, before any card, the palace's files never
// hold it, and the pipeline remembers the rendering for the echo guard.
func TestContextTransientInstructionFirstAndNeverStored(t *testing.T) {
	fx := newFixture(t, jobtest.Options{Git: true})
	fx.card(t, scoped("checkpoint the WAL after imports", domain.TierShu))
	const marker = "Answer without Markdown ZQX-7731"
	req := scopedRequest()
	req.Instructions = []string{"  ", marker}
	req.DryRun = false
	p := fx.context(t, req)
	at := strings.Index(p.Rendered, marker)
	first := strings.Index(p.Rendered, "\n## ")
	if at < 0 || first < 0 || strings.Index(p.Rendered, "## Transient instructions") != first+1 || at < first {
		t.Fatalf("the instruction is not the first section:\n%s", p.Rendered)
	}
	if len(p.Items) == 0 || strings.Index(p.Rendered, p.Items[0].Statement) < at {
		t.Errorf("a card renders before the instruction:\n%s", p.Rendered)
	}
	if !slices.Equal(p.TransientInstructions, []string{marker}) {
		t.Errorf("transient instructions = %q, want the one non-blank", p.TransientInstructions)
	}
	if len(fx.remembered) != 1 || fx.remembered[0] != p.Rendered {
		t.Errorf("the echo guard got %d renderings, want this pack's", len(fx.remembered))
	}
	if n, err := fx.Store.CountInjectionRequests(context.Background(), ""); err != nil || n != 1 {
		t.Fatalf("injection requests = %d, %v; want this one recorded", n, err)
	}
	files, _ := filepath.Glob(filepath.Join(fx.Home, "palace.db*"))
	if len(files) == 0 {
		t.Fatal("no database files to inspect")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte("ZQX-7731")) {
			t.Errorf("%s holds the transient instruction", filepath.Base(f))
		}
	}
}

// TestContextEmptySaysWhy: an empty pack says what exists and why none of
// it renders.
func TestContextEmptySaysWhy(t *testing.T) {
	tests := []struct {
		name    string
		seed    func(t *testing.T, fx *fixture)
		req     func() pack.ContextRequest
		cards   int
		wantWhy []string
	}{
		{"nothing at all", func(*testing.T, *fixture) {}, scopedRequest, 0, []string{"Nothing is recorded"}},
		{"nothing in this palace", func(*testing.T, *fixture) {}, func() pack.ContextRequest { r := scopedRequest(); r.AllRepos = true; return r },
			0, []string{"Nothing is recorded in this palace yet."}},
		{"evidence only", func(t *testing.T, fx *fixture) {
			fx.record(t, ev{content: "the import stalled", field: "storage"})
			fx.record(t, ev{content: "the import stalled again", field: "storage"})
		}, scopedRequest, 0, []string{"2 evidence rows exist", "no card has been distilled"}},
		{"all expired", func(t *testing.T, fx *fixture) {
			c := scoped("the importer runs nightly", domain.TierShu)
			c.expiresAt = "2026-03-01T00:00:00.000Z"
			fx.card(t, c)
		}, scopedRequest, 1, []string{"All 1 authoritative card", "have expired", "set_expiry"}},
		{"only dao_tian, limit 0", func(t *testing.T, fx *fixture) {
			fx.card(t, scoped("evidence before belief", domain.TierDaoTian))
		}, func() pack.ContextRequest { r := scopedRequest(); r.DaoTianLimit = new(int); return r }, 1, []string{"Only dao_tian cards apply and --dao-tian-limit 0 leaves them out."}},
		{"nothing here, memory elsewhere", func(t *testing.T, fx *fixture) {
			d := fx.sibling(t, "d", "https://github.com/acme/d")
			d.card(t, scoped("checkpoint the WAL after imports", domain.TierShu))
		}, scopedRequest, 0, []string{"Nothing is recorded", "1 card", "2 evidence rows", "other repositories", "--all-repos"}},
		{"only a candidate", func(t *testing.T, fx *fixture) {
			c := scoped("vacuum weekly", domain.TierShu)
			c.status = domain.StatusCandidate
			fx.card(t, c)
		}, scopedRequest, 1, []string{"1 card exist", "none is authoritative (1 candidate)", "--include-candidates"}},
		{"out of scope", func(t *testing.T, fx *fixture) {
			fx.card(t, spec{statement: "docs use sentence case", tier: domain.TierQi, scope: domain.Scope{Paths: []string{"docs/**"}}})
		}, scopedRequest, 1, []string{"1 card", "none applies", "matches none of docs/**"}},
		{"budget too small", func(t *testing.T, fx *fixture) {
			fx.card(t, scoped("checkpoint the WAL after imports", domain.TierShu))
		}, func() pack.ContextRequest { r := scopedRequest(); r.Budget = 10; return r }, 1, []string{"none fits the budget of 10"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t, jobtest.Options{Git: true})
			tt.seed(t, fx)
			p := fx.context(t, tt.req())
			m := p.MemoryExists
			if m.Rendered != 0 || m.Cards != tt.cards {
				t.Fatalf("memory_exists = %+v, want %d cards, none rendered", m, tt.cards)
			}
			for _, w := range tt.wantWhy {
				if !strings.Contains(m.Reason, w) {
					t.Errorf("reason %q lacks %q", m.Reason, w)
				}
			}
			if !strings.Contains(p.Rendered, m.Reason) {
				t.Errorf("rendered does not say why it is empty:\n%s", p.Rendered)
			}
		})
	}
}

// TestContextCitationsCappedCounterexamplesFirst: an item cites at most
// eight links, the counterexample among them however new, and the counterexample
// contests the card, which renders as a reference with the warning.
func TestContextCitationsCappedCounterexamplesFirst(t *testing.T) {
	fx := newFixture(t, jobtest.Options{Git: true})
	id := fx.card(t, scoped("checkpoint the WAL after imports", domain.TierShu))
	for i := range 9 {
		fx.link(t, id, domain.RoleSupporting, fx.record(t, ev{content: fmt.Sprint("another run ", i), field: "storage", source: fmt.Sprint("ci://", i)}))
	}
	counter := fx.record(t, ev{content: "one run still locked", field: "storage", source: "ci://bad"})
	fx.link(t, id, domain.RoleCounterexample, counter)
	p := fx.context(t, scopedRequest())
	it, _ := item(p, id)
	if it.CitationCount != 12 || len(it.Citations) != 8 {
		t.Fatalf("citations %d of %d, want 8 of 12", len(it.Citations), it.CitationCount)
	}
	// The counterexample is the newest of twelve links, yet cited.
	if !slices.ContainsFunc(it.Citations, func(c cardview.Citation) bool {
		return c.EvidenceID == counter && c.Role == domain.RoleCounterexample && c.SourceRef == "ci://bad"
	}) {
		t.Errorf("the counterexample is not among the citations: %+v", it.Citations)
	}
	if it.RenderForm != domain.FormRefOnly || it.Contest == nil || !strings.Contains(p.Rendered, "**contested**: counterexample · `"+counter+"` (ci://bad)") {
		t.Errorf("contested card rendered as %s, contest %+v:\n%s", it.RenderForm, it.Contest, p.Rendered)
	}
}

// TestContextDryRunsAreByteIdentical: the same request over the same
// palace at the same time gives the same pack, and a dry run carries no
// request id and writes nothing.
func TestContextDryRunsAreByteIdentical(t *testing.T) {
	fx := newFixture(t, jobtest.Options{Git: true})
	for _, s := range []string{"checkpoint the WAL after imports", "never hold a write lock across network calls", "index foreign keys"} {
		c := scoped(s, domain.TierShu)
		c.content = "Detail for: " + s
		c.renderPref = domain.RenderInlineFull
		fx.card(t, c)
	}
	fx.card(t, spec{statement: "prefer small commits", tier: domain.TierQi})
	req := scopedRequest()
	req.Query = "WAL lock"
	req.Budget = 700
	req.IncludeEvidence = true
	req.Instructions = []string{"be brief"}
	marshal := func() []byte {
		t.Helper()
		b, err := json.Marshal(fx.context(t, req))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	one, two := marshal(), marshal()
	if !bytes.Equal(one, two) {
		t.Fatalf("two dry runs differ:\n%s\n%s", one, two)
	}
	if bytes.Contains(one, []byte(`"request_id"`)) {
		t.Error("a dry run without a request id carries one")
	}
	if n, _ := fx.Store.CountInjectionRequests(context.Background(), ""); n != 0 {
		t.Errorf("dry runs wrote %d injection records", n)
	}
}
