package host_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/audit"
	"github.com/palacehq/palace/host/authority"
	"github.com/palacehq/palace/host/intake"
	"github.com/palacehq/palace/host/pack"
)

// kindOf fails the test unless err is a host error of kind k whose message
// holds every want.
func wantKind(t *testing.T, what string, err error, k host.Kind, want ...string) {
	t.Helper()
	if err == nil || host.KindOf(err) != k {
		t.Fatalf("%s: err = %v (kind %v), want kind %v", what, err, host.KindOf(err), k)
	}
	msg := err.Error()
	var he *host.Error
	if errors.As(err, &he) {
		msg += " | " + strings.Join(he.Reasons, " | ")
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("%s: %q does not say %q", what, msg, w)
		}
	}
}

// TestShowEvidenceNamesTheOriginal: a duplicate recorded on purpose is
// shown with its original (how Record keeps one row per content is
// host/intake's test).
func TestShowEvidenceNamesTheOriginal(t *testing.T) {
	ctx := context.Background()
	e := newCxEnv(t)
	h := e.openClock(e.repo("a", "https://github.com/acme/a"))
	first, err := h.Intake().Record(ctx, intake.RecordRequest{Content: "the import took 4 s", Field: "perf"})
	if err != nil {
		t.Fatal(err)
	}
	dup, err := h.Intake().Record(ctx, intake.RecordRequest{Content: "the import took 4 s", AllowDuplicate: true})
	if err != nil {
		t.Fatal(err)
	}
	if shown, err := h.ShowEvidence(ctx, dup.ID, false); err != nil || shown.DuplicateOf != first.ID {
		t.Fatalf("show duplicate = %+v, %v", shown, err)
	}
	if shown, err := h.ShowEvidence(ctx, first.ID, false); err != nil || shown.DuplicateOf != "" {
		t.Fatalf("show original = %+v, %v", shown, err)
	}
}

// Each gate-gaming case fails to promote with a reason naming the rule.
func TestGateCannotBeGamed(t *testing.T) {
	ctx := context.Background()
	e := newCxEnv(t)
	dir := e.repo("a", "https://github.com/acme/a")
	h := e.openClock(dir)
	rec := func(content string, extra ...func(*intake.RecordRequest)) string {
		t.Helper()
		req := intake.RecordRequest{Content: content, Field: "storage"}
		for _, f := range extra {
			f(&req)
		}
		r, err := h.Intake().Record(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	dupe := func(r *intake.RecordRequest) { r.AllowDuplicate = true }

	t.Run("three identical rows are one supporting", func(t *testing.T) {
		a := rec("WAL fixed the lock errors")
		b := rec("WAL fixed the lock errors", dupe)
		c := rec("WAL fixed the lock errors", dupe)
		v := rec("200 clean runs with WAL")
		card, err := h.Distill(ctx, intake.DistillRequest{Statement: "Use WAL", Tier: "dao_ren", Supporting: []string{a, b, c}, Verification: []string{v}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = h.Promote(ctx, card.ID, host.PromoteRequest{Reason: "three rows"})
		wantKind(t, "promote", err, host.KindDenied, "supporting: have 1, need 2")
	})
	t.Run("one row cannot hold two roles", func(t *testing.T) {
		a := rec("busy_timeout of 5 s is enough")
		b := rec("busy_timeout of 5 s is enough", dupe)
		card, err := h.Distill(ctx, intake.DistillRequest{Statement: "Set a busy timeout", Tier: "qi", Supporting: []string{a}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = h.Link(ctx, card.ID, host.LinkRequest{Role: "verification", EvidenceID: a})
		wantKind(t, "link as verification too", err, host.KindInvalid, "linked to card "+card.ID+" as supporting already", "one role per card")
		_, err = h.Link(ctx, card.ID, host.LinkRequest{Role: "verification", EvidenceID: b})
		wantKind(t, "link its duplicate as verification", err, host.KindInvalid, "whose content it repeats")
		_, err = h.Promote(ctx, card.ID, host.PromoteRequest{Reason: "r", Verification: []string{a}})
		wantKind(t, "promote verifying with the supporting row", err, host.KindInvalid, "one role per card")
		_, err = h.Distill(ctx, intake.DistillRequest{Statement: "Set a busy timeout too", Tier: "qi", Supporting: []string{a}, Verification: []string{a}})
		wantKind(t, "distill with one row in two roles", err, host.KindInvalid, "one role per card")
	})
	t.Run("agent cannot write human provenance", func(t *testing.T) {
		agent := e.open(dir, host.Agent)
		_, err := agent.Intake().Record(ctx, intake.RecordRequest{Content: "a person told me so", Provenance: "human"})
		wantKind(t, "agent records human provenance", err, host.KindMode, "provenance human is refused in agent mode")
	})
	t.Run("teaching counts human provenance only", func(t *testing.T) {
		var sup, ver []string
		for i := range 3 {
			sup = append(sup, rec("dao evidence "+string(rune('a'+i))))
		}
		for i := range 2 {
			ver = append(ver, rec("dao verification "+string(rune('a'+i))))
		}
		agent := e.open(dir, host.Agent)
		taught, err := agent.Intake().Record(ctx, intake.RecordRequest{Content: "the agent says it was taught this", Provenance: "research"})
		if err != nil {
			t.Fatal(err)
		}
		card, err := h.Distill(ctx, intake.DistillRequest{Statement: "Never lose evidence", Tier: "dao_tian", Supporting: sup, Verification: ver, Teaching: []string{taught.ID}})
		if err != nil {
			t.Fatal(err)
		}
		if card.Anchor.Kind != "global" || card.Domain != "global" {
			t.Errorf("dao_tian card at %s domain %s, want global, global", card.Anchor.Kind, card.Domain)
		}
		g, err := h.Gate(ctx, card.ID, host.GateRequest{})
		if err != nil || g.Allow || g.Missing["teaching"] != 1 || !strings.Contains(strings.Join(g.Reasons, "|"), "teaching: have 0, need 1") {
			t.Fatalf("gate with agent teaching = %+v, %v; want teaching missing", g, err)
		}
		human := rec("a reviewer taught the team this", func(r *intake.RecordRequest) { r.Provenance = "human" })
		if _, err := h.Link(ctx, card.ID, host.LinkRequest{Role: "teaching", EvidenceID: human}); err != nil {
			t.Fatal(err)
		}
		if g, err := h.Gate(ctx, card.ID, host.GateRequest{}); err != nil || !g.Allow {
			t.Fatalf("gate with human teaching = %+v, %v; want allowed", g, err)
		}
	})
	t.Run("source refs reach the policy input", func(t *testing.T) {
		a := rec("run 1 passed", func(r *intake.RecordRequest) { r.SourceRef = "ci://1" })
		b := rec("run 2 passed", func(r *intake.RecordRequest) { r.SourceRef = "ci://1" })
		card, err := h.Distill(ctx, intake.DistillRequest{Statement: "CI passes", Tier: "qi", Supporting: []string{a, b}})
		if err != nil {
			t.Fatal(err)
		}
		g, err := h.Gate(ctx, card.ID, host.GateRequest{})
		if err != nil || len(g.SourceRefs.Supporting) != 1 || g.SourceRefs.Supporting[0] != "ci://1" || g.Counts.Supporting != 2 {
			t.Fatalf("gate = %+v, %v; want 2 supporting from one source", g, err)
		}
	})
}

// A counterexample after promotion takes the card out of the inline lanes;
// resolve with newer verification brings it back; demote → resolve →
// promote works; a published copy of a demoted original is contested.
func TestContestedCardLeavesTheInlineLanes(t *testing.T) {
	ctx := context.Background()
	e := newCxEnv(t)
	dir := e.repo("a", "https://github.com/acme/a")
	h := e.openClock(dir)
	rec := func(content, src string) string {
		t.Helper()
		e.now = e.now.Add(time.Minute)
		r, err := h.Intake().Record(ctx, intake.RecordRequest{Content: content, Field: "storage", SourceRef: src})
		if err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	sup, ver := rec("locks without WAL", "ci://1"), rec("WAL: 0 locks", "ci://2")
	c := scoped("Open SQLite in WAL mode", "qi")
	card, err := h.Distill(ctx, intake.DistillRequest{Statement: c.statement, Tier: "qi", Field: "storage", Supporting: []string{sup}, Verification: []string{ver}})
	if err != nil {
		t.Fatal(err)
	}
	id := card.ID
	if _, err := h.Promote(ctx, id, host.PromoteRequest{Reason: "verified"}); err != nil {
		t.Fatal(err)
	}
	req := pack.ContextRequest{Query: "sqlite wal", Field: "storage", DryRun: true}
	lane := func(want string) pack.Item {
		t.Helper()
		p, err := h.Pack().Context(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		it, ok := item(p, id)
		if !ok || !strings.HasPrefix(string(it.RenderForm), want) {
			t.Fatalf("card %s in the pack as %q (present %v), want %s…\n%s", id, it.RenderForm, ok, want, p.Rendered)
		}
		return it
	}
	lane("inline")

	counter := rec("WAL on NFS still locks", "ci://nfs")
	res, err := h.Link(ctx, id, host.LinkRequest{Role: "counterexample", EvidenceID: counter})
	if err != nil || res.Contest == nil {
		t.Fatalf("link counterexample = %+v, %v; want a contest", res, err)
	}
	it := lane("ref_only")
	if it.Contest == nil || len(it.Contest.Citations) != 1 || it.Contest.Citations[0].EvidenceID != counter || it.Contest.Citations[0].SourceRef != "ci://nfs" {
		t.Fatalf("contest = %+v, want the counterexample's citation", it.Contest)
	}
	// The audit lists it first, with what to do.
	other := e.card(h, scoped("Wrap errors with context", "shu"))
	rep, err := h.Audit(ctx, audit.Filter{})
	if err != nil || len(rep.Rows) < 2 || rep.Rows[0].ID != id || rep.Rows[0].Warnings[0].Code != "contested" ||
		rep.Rows[0].Suggested[0].Action != "demote" || rep.Rows[0].Suggested[1].Action != "resolve" {
		t.Fatalf("audit = %+v, %v; want %s first, contested, demote or resolve", rep.Rows, err, id)
	}
	_ = other
	// A gate on a contested card is denied by the floor.
	if g, _ := h.Gate(ctx, id, host.GateRequest{Target: "canonical"}); g.Allow || !strings.Contains(strings.Join(g.Reasons, "|"), "is contested") {
		t.Errorf("gate of a contested card = %+v", g)
	}
	// Verification older than the counterexample does not resolve it.
	_, err = h.Resolve(ctx, id, host.ResolveRequest{Verification: []string{ver}, Reason: "old news"})
	if err == nil {
		t.Fatal("resolve with the old verification was allowed")
	}
	// ver is linked as verification already: the same row is fine; a fresh one decides.
	wantKind(t, "resolve with old verification", err, host.KindDenied)
	newer := rec("WAL on local disk: 500 clean runs after the NFS report", "ci://3")
	if _, err := h.Resolve(ctx, id, host.ResolveRequest{Verification: []string{newer}, Reason: "NFS is not supported"}); err != nil {
		t.Fatal(err)
	}
	if it := lane("inline"); it.Contest != nil {
		t.Fatalf("resolved card still contested: %+v", it.Contest)
	}
	if _, err := h.Resolve(ctx, id, host.ResolveRequest{Verification: []string{newer}, Reason: "again"}); host.KindOf(err) != host.KindInvalid {
		t.Fatalf("resolve of a card not contested: %v, want KindInvalid", err)
	}

	// Publish, then demote the original: the copy is contested.
	pub, err := h.Publish(ctx, id, host.PublishRequest{To: "repo", Reason: "holds for every checkout"})
	if err != nil {
		t.Fatal(err)
	}
	bad := rec("WAL corrupts on this filesystem", "ci://bad")
	if _, err := h.Demote(ctx, id, host.DemoteRequest{Reason: "it does not hold", Counterexample: []string{bad}}); err != nil {
		t.Fatal(err)
	}
	copies, err := h.ContestsOf(ctx, []string{pub.Copy.ID})
	if err != nil || len(copies[pub.Copy.ID]) != 1 || copies[pub.Copy.ID][0].Kind != authority.ContestWitnessSuperseded {
		t.Fatalf("copy contests = %+v, %v; want witness_superseded", copies, err)
	}
	// Demote → promote is blocked by the counterexample; resolve with newer
	// verification, then promote through the same gate.
	if _, err := h.Promote(ctx, id, host.PromoteRequest{Reason: "back"}); host.KindOf(err) != host.KindDenied {
		t.Fatalf("promote of the demoted card: %v, want denied", err)
	}
	fixed := rec("the filesystem bug is fixed upstream; 500 clean runs", "ci://4")
	if _, err := h.Resolve(ctx, id, host.ResolveRequest{Verification: []string{fixed}, Reason: "fixed upstream"}); err != nil {
		t.Fatal(err)
	}
	got, err := h.Promote(ctx, id, host.PromoteRequest{Reason: "holds again"})
	if err != nil || got.Card.Status != "promoted" {
		t.Fatalf("re-promote = %+v, %v", got.Card.Status, err)
	}
}

func TestMarkContestedIsTheHostHook(t *testing.T) {
	ctx := context.Background()
	e := newCxEnv(t)
	h := e.openClock(e.repo("a", "https://github.com/acme/a"))
	id := e.card(h, scoped("Open SQLite in WAL mode", "qi"))
	// A contest without evidence is refused: a claim is not a contest.
	_, err := h.MarkContested(ctx, id, host.ContestRequest{Kind: authority.ContestContradiction, Reason: "agents rejected it 5 times", Source: "adoption:sig_1"})
	wantKind(t, "no evidence", err, host.KindInvalid, "evidence")
	seen := e.ev(h, "WAL mode failed on the network share", "general", "")
	res, err := h.MarkContested(ctx, id, host.ContestRequest{Kind: authority.ContestContradiction, Reason: "agents rejected it 5 times", EvidenceID: seen, Source: "adoption:sig_1"})
	if err != nil || !res.Contested || res.Event == nil || res.Event.DecidedBy != "rule" {
		t.Fatalf("mark contested = %+v, %v", res, err)
	}
	// The same contest twice is one contest.
	if res, err := h.MarkContested(ctx, id, host.ContestRequest{Kind: authority.ContestContradiction, Reason: "again", EvidenceID: seen, Source: "adoption:sig_1"}); err != nil || res.Contested {
		t.Fatalf("repeat = %+v, %v; want no second contest", res, err)
	}
	_, err = h.MarkContested(ctx, id, host.ContestRequest{Kind: "", Reason: "x"})
	wantKind(t, "no kind", err, host.KindInvalid, "kind")
	p, err := h.Pack().Context(ctx, cxScopedRequest())
	if err != nil {
		t.Fatal(err)
	}
	if it, ok := item(p, id); !ok || it.RenderForm != "ref_only" || it.Contest == nil || it.Contest.Reasons[0] != "agents rejected it 5 times" {
		t.Fatalf("contested item = %+v", it)
	}
}

func TestAnchorInvariants(t *testing.T) {
	ctx := context.Background()
	e := newCxEnv(t)
	a := e.repo("a", "https://github.com/acme/a")
	b := e.repo("b", "https://github.com/acme/b")
	ha, hb := e.openClock(a), e.open(b, host.Human)

	research, err := ha.Intake().Record(ctx, intake.RecordRequest{Content: "the docs say WAL needs shared memory", Provenance: "research"})
	if err != nil || research.Anchor.Kind != "repo" {
		t.Fatalf("research evidence at %s, %v; want repo", research.Anchor.Kind, err)
	}
	_, err = ha.Intake().Record(ctx, intake.RecordRequest{Content: "x", Anchor: "global", Domain: "project"})
	wantKind(t, "global anchor, domain project", err, host.KindInvalid, "holds domain global only")
	_, err = ha.Distill(ctx, intake.DistillRequest{Statement: "s", Tier: "shu", Anchor: "global", Supporting: []string{research.ID}})
	wantKind(t, "distill shu at global", err, host.KindInvalid, "publish it outward")

	outside := e.open(e.root, host.Human)
	_, err = outside.Intake().Record(ctx, intake.RecordRequest{Content: "written from nowhere"})
	wantKind(t, "record outside git", err, host.KindInvalid, "not inside a git checkout", "--anchor global")
	if r, err := outside.Intake().Record(ctx, intake.RecordRequest{Content: "written from nowhere", Anchor: "global"}); err != nil || r.Domain != "global" {
		t.Fatalf("record outside git with --anchor global = %+v, %v", r, err)
	}

	id := e.card(ha, scoped("Open SQLite in WAL mode", "qi"))
	_, err = hb.Retire(ctx, id, "not ours")
	wantKind(t, "retire another repo's card", err, host.KindInvalid, "anchored to worktree "+a)
	_, err = hb.Gate(ctx, id, host.GateRequest{})
	wantKind(t, "gate another repo's card", err, host.KindInvalid, "--all-repos")
	if _, err := hb.Gate(ctx, id, host.GateRequest{AllRepos: true}); err != nil {
		t.Fatalf("gate with all repos: %v", err)
	}
	_, err = hb.ViewCard(ctx, id, false)
	wantKind(t, "show another repo's card", err, host.KindInvalid, "--all-repos")
	_, err = hb.ListCards(ctx, host.CardFilter{Anchor: "all"})
	wantKind(t, "list anchor all", err, host.KindInvalid, "--all-repos")
	if cards, err := hb.ListCards(ctx, host.CardFilter{AllRepos: true}); err != nil || len(cards) != 1 {
		t.Fatalf("list all repos = %d cards, %v", len(cards), err)
	}

	// Publishing to global sets domain global.
	r1, err := ha.Publish(ctx, id, host.PublishRequest{To: "repo", Reason: "r"})
	if err != nil {
		t.Fatal(err)
	}
	r2, err := ha.Publish(ctx, r1.Copy.ID, host.PublishRequest{To: "global", Reason: "r"})
	if err != nil || r2.Copy.Domain != "global" || r2.Copy.Anchor.Kind != "global" {
		t.Fatalf("publish to global = %+v, %v; want domain global", r2.Copy.Card, err)
	}
}

func TestCandidateExpiry(t *testing.T) {
	ctx := context.Background()
	e := newCxEnv(t)
	h := e.openClock(e.repo("a", "https://github.com/acme/a"))
	ev := e.ev(h, "seen once", "general", "")
	ver := e.ev(h, "seen twice", "general", "")
	_, err := h.Distill(ctx, intake.DistillRequest{Statement: "old news", Tier: "qi", Supporting: []string{ev}, ExpiresAt: "2026-01-01"})
	wantKind(t, "expires_at in the past", err, host.KindInvalid, "not in the future")
	old, err := h.Distill(ctx, intake.DistillRequest{Statement: "waiting for review", Tier: "qi", Supporting: []string{ev}})
	if err != nil {
		t.Fatal(err)
	}
	soon, err := h.Distill(ctx, intake.DistillRequest{Statement: "holds this week", Tier: "qi", Supporting: []string{ev}, Verification: []string{ver}, ExpiresAt: "2026-03-09"})
	if err != nil {
		t.Fatal(err)
	}
	e.now = e.now.Add(10 * 24 * time.Hour)
	// Past its expiry, a card cannot be promoted.
	_, err = h.Promote(ctx, soon.ID, host.PromoteRequest{Reason: "r"})
	wantKind(t, "promote expired", err, host.KindDenied)
	e.now = e.now.Add(25 * 24 * time.Hour)
	fresh, err := h.Distill(ctx, intake.DistillRequest{Statement: "new idea", Tier: "qi", Supporting: []string{ev}})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := h.Candidates(ctx, host.CandidateRequest{})
	if err != nil || rep.MaxAgeDays != 30 || len(rep.Candidates) != 3 || rep.Stale != 2 || rep.Candidates[2].ID != fresh.ID || rep.Candidates[2].Stale != "" {
		t.Fatalf("candidates = %+v, %v; want 3, 2 stale, the fresh one last and not stale", rep, err)
	}
	agent := e.open(e.root+"/a", host.Agent)
	_, err = agent.Candidates(ctx, host.CandidateRequest{Apply: true})
	wantKind(t, "agent applies expiry", err, host.KindMode)
	rep, err = h.Candidates(ctx, host.CandidateRequest{Apply: true})
	if err != nil || len(rep.Archived) != 2 {
		t.Fatalf("apply = %+v, %v", rep, err)
	}
	for _, id := range []string{old.ID, soon.ID} {
		c, _ := h.ShowCard(ctx, id)
		evs, _ := h.CardEvents(ctx, id, false)
		if c.Status != "retired" || evs[len(evs)-1].Type != "retired" {
			t.Errorf("%s is %s after apply, last event %+v", id, c.Status, evs[len(evs)-1])
		}
	}
	if c, _ := h.ShowCard(ctx, fresh.ID); c.Status != "candidate" {
		t.Errorf("fresh candidate is %s", c.Status)
	}
}

func TestDirectWriteOverACounterexampleStartsContested(t *testing.T) {
	ctx := context.Background()
	e := newCxEnv(t)
	h := e.openClock(e.repo("a", "https://github.com/acme/a"))
	sup, cex := e.ev(h, "it worked", "general", ""), e.ev(h, "it failed once", "general", "ci://9")
	c, err := h.Distill(ctx, intake.DistillRequest{Statement: "It works", Tier: "qi", Supporting: []string{sup}, Counterexample: []string{cex},
		Direct: true, Status: "promoted"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Contest == nil || c.Contest.Citations[0].EvidenceID != cex || c.Contest.Citations[0].SourceRef != "ci://9" {
		t.Fatalf("direct write over a counterexample: contest %+v", c.Contest)
	}
}
