package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/cardview"
	"github.com/palacehq/palace/host/pack"
	"github.com/palacehq/palace/store"
)

func TestContextNeverLeaksAnotherRepository(t *testing.T) {
	ctx := context.Background()
	e := newCxEnv(t)
	a := e.repo("a", "https://github.com/acme/a")
	b := e.repo("b", "git@github.com:acme/b.git")
	ha, hb := e.open(a, host.Human), e.open(b, host.Human)
	ca := e.card(ha, scoped("A stores with WAL", "shu"))
	bRepo := e.card(hb, scoped("B stores with a rollback journal", "shu").at("repo"))
	bTree := e.card(hb, scoped("B keeps a worktree note", "qi"))
	e.ev(hb, "B evidence about storage locks", "storage", "b/store.go:1")

	req := cxScopedRequest()
	req.Query = "storage journal locks"
	req.IncludeEvidence = true
	p, err := ha.Pack().Context(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if got := itemIDs(p); !reflect.DeepEqual(got, []string{ca}) {
		t.Fatalf("items in A = %v, want only A's card %s", got, ca)
	}
	raw, _ := json.Marshal(p)
	for _, leak := range []string{bRepo, bTree, "acme/b", "B evidence", "rollback"} {
		if bytes.Contains(raw, []byte(leak)) {
			t.Errorf("A's pack mentions %q from repository B", leak)
		}
	}
	if p.MemoryExists.Cards != 1 {
		t.Errorf("memory_exists.cards = %d, want 1 (B's cards are not counted as here)", p.MemoryExists.Cards)
	}

	req.AllRepos = true
	p, err = ha.Pack().Context(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{ca, bRepo, bTree} {
		if _, ok := item(p, id); !ok {
			t.Errorf("--all-repos pack lacks %s: items %v", id, itemIDs(p))
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
}

func TestContextOrdersByValueThenTierThenInnermostAnchor(t *testing.T) {
	ctx := context.Background()
	e := newCxEnv(t)
	a := e.repo("a", "https://github.com/acme/a")
	wt := e.worktree(a, "wt")
	hw := e.open(wt, host.Human)
	// Only dao_tian starts at the global anchor from inside a checkout; a
	// shu card is written there from outside git.
	g := e.card(e.open(e.root, host.Human), scoped("global: keep migrations forward-only", "shu").at("global"))
	r := e.card(hw, scoped("repo: run the store tests with -race", "shu").at("repo"))
	w := e.card(hw, scoped("worktree: this branch rewrites the FTS triggers", "shu"))
	dr := e.card(hw, scoped("repo: storage changes need a migration", "dao_ren").at("repo"))

	p, err := hw.Pack().Context(ctx, cxScopedRequest())
	if err != nil {
		t.Fatal(err)
	}
	// Inside a lane, by value: salience (which holds relevance), then
	// relevance, then tier (dao first), then anchor (innermost first).
	for i := 1; i < len(p.Items); i++ {
		x, y := p.Items[i-1], p.Items[i]
		if x.Lane == y.Lane && (x.Salience < y.Salience || x.Salience == y.Salience && x.Relevance < y.Relevance) {
			t.Errorf("item %d (%s, salience %d, relevance %v) before a more valuable one (%s, %d, %v)", i-1, x.ID, x.Salience, x.Relevance, y.ID, y.Salience, y.Relevance)
		}
	}
	if got := itemIDs(p); len(got) != 4 || !slices.Contains(got, w) || !slices.Contains(got, dr) {
		t.Errorf("items %v, want all four of %v", got, []string{dr, w, r, g})
	}
	// The main checkout shares the repo anchor but not the worktree's.
	p, err = e.open(a, host.Human).Pack().Context(ctx, cxScopedRequest())
	if err != nil {
		t.Fatal(err)
	}
	if got := itemIDs(p); len(got) != 3 || slices.Contains(got, w) {
		t.Errorf("from the main checkout: %v, want %v without %s (the other worktree's card never shows)", got, []string{dr, r, g}, w)
	}
}

func TestContextDaoTianLimit(t *testing.T) {
	ctx := context.Background()
	e := newCxEnv(t)
	h := e.open(e.repo("a", "https://github.com/acme/a"), host.Human)
	d1 := e.card(h, scoped("dao_tian one: evidence before belief", "dao_tian"))
	d2 := e.card(h, scoped("dao_tian two: name the uncertainty", "dao_tian"))
	s := e.card(h, scoped("shu: bisect before guessing", "shu"))
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
			req := cxScopedRequest()
			req.DaoTianLimit = tt.limit
			p, err := h.Pack().Context(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if got := itemIDs(p); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("items = %v, want %v", got, tt.want)
			}
			n := 0
			for _, it := range p.Items {
				if it.Tier == "dao_tian" {
					n++
				}
			}
			for _, sk := range p.Skipped {
				if sk.Tier == "dao_tian" && sk.Reason != "dao_tian_limit" {
					t.Errorf("dao_tian %s skipped for %s", sk.ID, sk.Reason)
				}
			}
			if n+len(p.Skipped) != 2 {
				t.Errorf("%d dao_tian items + %d skipped, want 2 in all", n, len(p.Skipped))
			}
		})
	}
	if _, err := h.Pack().Context(ctx, pack.ContextRequest{DaoTianLimit: limit(-1)}); host.KindOf(err) != host.KindInvalid {
		t.Errorf("negative limit: err = %v, want invalid input", err)
	}
}

func TestContextStatuses(t *testing.T) {
	ctx := context.Background()
	e := newCxEnv(t)
	h := e.open(e.repo("a", "https://github.com/acme/a"), host.Human)
	promoted := e.card(h, scoped("promoted: checkpoint the WAL after imports", "shu"))
	cand := scoped("candidate: vacuum weekly", "shu")
	cand.status = "candidate"
	candidate := e.card(h, cand)
	demoted := e.card(h, scoped("demoted: disable fsync for speed", "shu"))
	retired := e.card(h, scoped("retired: use the old importer", "shu"))
	counter := e.ev(h, "fsync off lost data in the crash test", "storage", "test:crash")
	if _, err := h.Demote(ctx, demoted, host.DemoteRequest{Reason: "lost data", Counterexample: []string{counter}}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Retire(ctx, retired, "importer replaced"); err != nil {
		t.Fatal(err)
	}
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
			req := cxScopedRequest()
			req.IncludeCandidates = tt.includeCandidates
			p, err := h.Pack().Context(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
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
			if tt.includeCandidates && !strings.Contains(p.Rendered, "_(candidate, not yet authoritative)_") {
				t.Errorf("candidate not labelled in:\n%s", p.Rendered)
			}
		})
	}
}

func TestContextTransientInstructionFirstAndNeverStored(t *testing.T) {
	ctx := context.Background()
	e := newCxEnv(t)
	dir := e.repo("a", "https://github.com/acme/a")
	h := e.open(dir, host.Human)
	e.card(h, scoped("checkpoint the WAL after imports", "shu"))
	const marker = "Answer without Markdown ZQX-7731"
	req := cxScopedRequest()
	req.DryRun = false
	req.Instructions = []string{marker}
	p, err := h.Pack().Context(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	at := strings.Index(p.Rendered, marker)
	first := strings.Index(p.Rendered, "\n## ")
	if at < 0 || first < 0 || strings.Index(p.Rendered, "## Transient instructions") != first+1 || at < first {
		t.Fatalf("the instruction is not the first section:\n%s", p.Rendered)
	}
	if len(p.Items) == 0 || strings.Index(p.Rendered, p.Items[0].ID) < at {
		t.Errorf("a card renders before the instruction:\n%s", p.Rendered)
	}
	h.Close()
	files, _ := filepath.Glob(filepath.Join(e.home, "palace.db*"))
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

func TestContextDeterministic(t *testing.T) {
	ctx := context.Background()
	e := newCxEnv(t)
	dir := e.repo("a", "https://github.com/acme/a")
	h := e.open(dir, host.Human)
	for _, s := range []string{"checkpoint the WAL after imports", "never hold a write lock across network calls", "index foreign keys"} {
		c := scoped(s, "shu")
		c.content = "Detail for: " + s
		c.renderPref = "inline_full"
		e.card(h, c)
	}
	e.card(h, cxCard{statement: "prefer small commits", tier: "qi"})
	req := cxScopedRequest()
	req.Query = "WAL lock"
	req.Budget = 700
	req.IncludeEvidence = true
	req.Instructions = []string{"be brief"}
	marshal := func(h *host.Host, req pack.ContextRequest) []byte {
		t.Helper()
		p, err := h.Pack().Context(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	one, two := marshal(h, req), marshal(h, req)
	if !bytes.Equal(one, two) {
		t.Fatalf("two dry runs differ:\n%s\n%s", one, two)
	}
	if bytes.Contains(one, []byte(`"request_id"`)) {
		t.Error("a dry run without --request-id carries a request id")
	}
	// A real run with a fixed id on two copies of the same database.
	h.Close()
	copyHome := filepath.Join(e.root, "home2")
	if err := os.MkdirAll(copyHome, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"palace.db", "palace.db-wal"} {
		b, err := os.ReadFile(filepath.Join(e.home, f))
		if err != nil {
			continue
		}
		if err := os.WriteFile(filepath.Join(copyHome, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	req.DryRun, req.RequestID = false, "rq_fixed"
	first := marshal(e.open(dir, host.Human), req)
	e.home = copyHome
	second := marshal(e.open(dir, host.Human), req)
	if !bytes.Equal(first, second) {
		t.Fatalf("same database, same request, same id: packs differ:\n%s\n%s", first, second)
	}
}

func TestContextWritesOneEventPerCandidate(t *testing.T) {
	ctx := context.Background()
	e := newCxEnv(t)
	dir := e.repo("a", "https://github.com/acme/a")
	// Unscoped, a card applies everywhere at a reference's salience (20);
	// written 60 days ago and never applied, inactivity (−4) cools it to
	// inspector_only.
	e.now = cxEpoch.Add(-60 * 24 * time.Hour)
	cold := e.card(e.open(dir, host.Human), cxCard{statement: "name tests after behaviour", tier: "qi"})
	e.now = cxEpoch
	h := e.open(dir, host.Human)
	in := e.card(h, scoped("checkpoint the WAL after imports", "shu"))
	ref := e.card(h, cxCard{statement: "prefer small commits", tier: "qi"})
	out := e.card(h, cxCard{statement: "docs use sentence case", tier: "qi", paths: []string{"docs/**"}})
	req := cxScopedRequest()
	if _, err := h.Pack().Context(ctx, req); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, filepath.Join(e.home, "palace.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if n, _ := st.CountInjectionRequests(ctx, ""); n != 0 {
		t.Fatalf("a dry run wrote %d injection records", n)
	}
	req.DryRun, req.RequestID = false, "rq_one"
	if _, err := h.Pack().Context(ctx, req); err != nil {
		t.Fatal(err)
	}
	if err := h.SettleTelemetry(); err != nil {
		t.Fatal(err)
	}
	stats, err := st.InjectionStats(ctx, []string{in, ref, cold, out}, "2000-01-01T00:00:00.000Z")
	if err != nil {
		t.Fatal(err)
	}
	// A card the request is not about writes nothing: only real
	// candidates count toward cooling; skipped_scope is counted per
	// request, not rolled up per card.
	want := map[string]string{in: "inline_compact"}
	for id, outcome := range want {
		if got := stats[id].Counts; len(got) != 1 || got[outcome] != 1 {
			t.Errorf("%s: events %v, want one %s", id, got, outcome)
		}
	}
	for _, id := range []string{ref, cold, out} {
		if got, ok := stats[id]; ok {
			t.Errorf("%s: rollups %v for a card the request is not about or that is out of scope, want none", id, got)
		}
	}
	recs, err := st.InjectionRequests(ctx, "rq_one")
	if err != nil || len(recs) != 1 {
		t.Fatalf("rq_one records = %+v, %v; want one", recs, err)
	}
	wantCards := map[string][]string{"inline_compact": {in}}
	if r := recs[0]; !reflect.DeepEqual(r.Cards, wantCards) || r.ScopeSkipped != 1 {
		t.Errorf("rq_one record = %+v, want cards %v and 1 out of scope", r, wantCards)
	}
}

func TestContextEmptySaysWhatExists(t *testing.T) {
	ctx := context.Background()
	e := newCxEnv(t)
	a := e.repo("a", "https://github.com/acme/a")
	b := e.repo("b", "https://github.com/acme/b")
	c := e.repo("c", "https://github.com/acme/c")
	d := e.repo("d", "https://github.com/acme/d")
	ha, hb, hc, hd := e.open(a, host.Human), e.open(b, host.Human), e.open(c, host.Human), e.open(d, host.Human)
	e.card(hd, scoped("checkpoint the WAL after imports", "shu"))
	e.card(ha, cxCard{statement: "docs use sentence case", tier: "qi", paths: []string{"docs/**"}})
	cand := scoped("vacuum weekly", "shu")
	cand.status = "candidate"
	e.card(hb, cand)
	tests := []struct {
		name      string
		h         *host.Host
		req       pack.ContextRequest
		wantCards int
		wantWhy   []string
	}{
		{"nothing here, memory elsewhere", hc, cxScopedRequest(), 0, []string{"Nothing is recorded", "3 cards", "6 evidence rows", "other repositories", "--all-repos"}},
		{"only a candidate", hb, cxScopedRequest(), 1, []string{"1 card exist", "none is authoritative (1 candidate)", "--include-candidates"}},
		{"out of scope", ha, cxScopedRequest(), 1, []string{"1 card", "none applies", "matches none of docs/**"}},
		{"budget too small", hd, func() pack.ContextRequest { r := cxScopedRequest(); r.Budget = 10; return r }(), 1, []string{"none fits the budget of 10"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := tt.h.Pack().Context(ctx, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			m := p.MemoryExists
			if m.Rendered != 0 || m.Cards != tt.wantCards {
				t.Fatalf("memory_exists = %+v, want %d cards, none rendered", m, tt.wantCards)
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

func TestContextDistillSuggestions(t *testing.T) {
	ctx := context.Background()
	e := newCxEnv(t)
	h := e.open(e.repo("a", "https://github.com/acme/a"), host.Human)
	var xs []string
	for i := range 5 {
		xs = append(xs, e.ev(h, "import stalls "+itoa(i), "x", ""))
	}
	for i := range 4 {
		e.ev(h, "y note "+itoa(i), "y", "")
	}
	for i := range 5 {
		e.ev(h, "z note "+itoa(i), "z", "")
	}
	e.card(h, cxCard{statement: "z is settled", tier: "qi", field: "z"}) // 2 more z rows, and a card
	p, err := h.Pack().Context(ctx, pack.ContextRequest{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.DistillSuggestions) != 1 {
		t.Fatalf("suggestions = %+v, want one for x", p.DistillSuggestions)
	}
	s := p.DistillSuggestions[0]
	if s.Field != "x" || s.EvidenceCount != 5 || len(s.SampleIDs) != 3 || !slices.Contains(xs, s.SampleIDs[0]) ||
		!strings.Contains(s.Command, "--field x") || s.SuggestedTier != "dao_ren" {
		t.Errorf("suggestion = %+v", s)
	}
}

func TestContextBadInput(t *testing.T) {
	ctx := context.Background()
	e := newCxEnv(t)
	h := e.open(e.repo("a", "https://github.com/acme/a"), host.Human)
	tests := []struct {
		name  string
		req   pack.ContextRequest
		field string
	}{
		{"negative budget", pack.ContextRequest{Budget: -1}, "budget"},
		{"huge instruction", pack.ContextRequest{Instructions: []string{strings.Repeat("x", pack.MaxInstructionRunes+1)}}, "instruction"},
		{"invalid utf-8 instruction", pack.ContextRequest{Instructions: []string{"\xff"}}, "instruction"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := h.Pack().Context(ctx, tt.req)
			var he *host.Error
			if !errors.As(err, &he) || he.Kind != host.KindInvalid || he.Field != tt.field {
				t.Fatalf("err = %v, want invalid %s", err, tt.field)
			}
		})
	}
	// FTS5 syntax in a query is just words.
	if _, err := h.Pack().Context(ctx, pack.ContextRequest{Query: `"unbalanced AND (NEAR OR* -x`, DryRun: true}); err != nil {
		t.Errorf("a query with FTS5 operators failed: %v", err)
	}
}

func TestContextPolicyFallbacks(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		file   string
		policy string
		check  func(p pack.Pack) string
	}{
		{"a policy set that does not compile: embedded defaults decide", "broken.rego", "package palace.scope\n\ndecision := {",
			func(p pack.Pack) string {
				if !strings.Contains(p.Policy.Fallback, "failed to load") || p.Policy.Scope.Source != "embedded" {
					return "policy = " + p.Policy.Fallback
				}
				return ""
			}},
		{"a team scope policy with a malformed answer: the default decides, the pack says so", "scope.rego",
			"package palace.scope\n\nimport rego.v1\n\ndecision := {\"nobody\": true}\n",
			func(p pack.Pack) string {
				if p.Policy.Fallback != "" || !strings.Contains(p.Policy.Scope.Fallback, "scope.rego") || p.Policy.Scope.Hash == "" {
					return "scope decision = " + p.Policy.Scope.Fallback
				}
				return ""
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newCxEnv(t)
			dir := e.repo("a", "https://github.com/acme/a")
			e.card(e.open(dir, host.Human), scoped("checkpoint the WAL after imports", "shu"))
			pdir := filepath.Join(dir, ".palace", "policies")
			if err := os.MkdirAll(pdir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(pdir, tt.file), []byte(tt.policy), 0o644); err != nil {
				t.Fatal(err)
			}
			p, err := e.open(dir, host.Human).Pack().Context(ctx, cxScopedRequest())
			if err != nil {
				t.Fatal(err)
			}
			if msg := tt.check(p); msg != "" {
				t.Error(msg)
			}
			if len(p.Items) != 1 || p.Items[0].Lane != "core" {
				t.Errorf("the default did not decide: items %+v", p.Items)
			}
		})
	}
}

func TestContextCitationsCappedCounterexamplesFirst(t *testing.T) {
	ctx := context.Background()
	e := newCxEnv(t)
	h := e.open(e.repo("a", "https://github.com/acme/a"), host.Human)
	id := e.card(h, scoped("checkpoint the WAL after imports", "shu"))
	for i := range 9 {
		ev := e.ev(h, "another run "+itoa(i), "storage", "ci://"+itoa(i))
		if _, err := h.Link(ctx, id, host.LinkRequest{Role: "supporting", EvidenceID: ev}); err != nil {
			t.Fatal(err)
		}
	}
	counter := e.ev(h, "one run still locked", "storage", "ci://bad")
	if _, err := h.Link(ctx, id, host.LinkRequest{Role: "counterexample", EvidenceID: counter}); err != nil {
		t.Fatal(err)
	}
	p, err := h.Pack().Context(ctx, cxScopedRequest())
	if err != nil {
		t.Fatal(err)
	}
	it, _ := item(p, id)
	if it.CitationCount != 12 || len(it.Citations) != 8 {
		t.Fatalf("citations %d of %d, want 8 of 12", len(it.Citations), it.CitationCount)
	}
	if !slices.ContainsFunc(it.Citations, func(c cardview.Citation) bool { return c.EvidenceID == counter && c.SourceRef == "ci://bad" }) {
		t.Errorf("the counterexample is not among the citations: %+v", it.Citations)
	}
	// The counterexample contests the promoted card: it is rendered as a
	// reference carrying the counterexample's citation, never inline.
	if it.RenderForm != "ref_only" || it.Contest == nil || !strings.Contains(p.Rendered, "**contested**: counterexample · `"+counter+"` (ci://bad)") {
		t.Errorf("contested card rendered as %s, contest %+v:\n%s", it.RenderForm, it.Contest, p.Rendered)
	}
}
