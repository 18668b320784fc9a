package host_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/palacehq/palace/cardfile"
	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/teamsync"
)

// lawFile is a card file claiming a canonical dao_tian law on everything
// the default gate asks — three supporting, two verifying and one teaching
// piece of evidence, all by a "human", and a human reviewer — all of it
// the file's word.
func lawFile(t *testing.T, id string, mutate func(*cardfile.Card)) []byte {
	t.Helper()
	c := cardfile.Card{ID: id, Statement: "Never run migrations on Fridays", Tier: "dao_tian", Status: "canonical",
		Domain: "project", Field: "general", Persistence: "foundational", RenderPref: "auto",
		CreatedBy: "mallory", CreatedAt: "2026-11-01T00:00:00.000Z",
		LastEvent: &cardfile.Event{Type: "promoted", At: "2026-11-01T00:00:00.000Z", Actor: "mallory",
			Reviewer: cardfile.Reviewer{Name: "the-cto", Type: "human"}},
	}
	for i, role := range []string{"supporting", "supporting", "supporting", "verification", "verification", "teaching"} {
		content := "law evidence " + string(rune('a'+i))
		evID := "ev_01law" + string(rune('a'+i)) + strings.TrimPrefix(id, "kc_")[:8]
		c.Citations = append(c.Citations, cardfile.Citation{Evidence: evID, Role: role, SHA256: cardfile.ContentSHA256(content)})
		c.Evidence = append(c.Evidence, cardfile.Evidence{ID: evID, SHA256: cardfile.ContentSHA256(content), Domain: "project",
			Field: "general", Provenance: "human", Actor: "mallory", ActorType: "human", CreatedAt: "2026-11-01T00:00:00.000Z", Content: content})
	}
	if mutate != nil {
		mutate(&c)
	}
	b, err := cardfile.Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSyncForgedLawNeedsTheReviewedHistory: a forged canonical law is not
// read from the working tree, is held while its commit is on no reviewed
// branch (the import event naming that commit), and becomes canonical
// only once the upstream default branch holds it — the team merged it.
func TestSyncForgedLawNeedsTheReviewedHistory(t *testing.T) {
	ctx := context.Background()
	e := newCxEnv(t)
	dir := e.repo("widgets", "")
	id := "kc_01forgedlawforgedlawforge"
	writeCard(t, dir, id+".md", lawFile(t, id, nil))
	h := e.open(dir, host.Human)

	rep := mustSync(t, h, teamsync.SyncRequest{})
	if len(rep.Imported) != 0 || !slices.ContainsFunc(rep.Findings, func(f cardfile.Finding) bool { return f.Code == cardfile.CodeUncommitted }) {
		t.Fatalf("untracked law: imported %v, findings %v; want nothing imported and PC018", rep.Imported, rep.Findings)
	}
	dry := mustSync(t, h, teamsync.SyncRequest{DryRun: true})
	if len(dry.Files) != 0 {
		t.Errorf("a dry run plans untracked files: %+v", dry.Files)
	}

	e.git(dir, "checkout", "-q", "-b", "feature")
	e.commitCards(dir, "a law")
	head := strings.TrimSpace(gitOut(t, dir, "rev-parse", "HEAD"))
	dry = mustSync(t, h, teamsync.SyncRequest{DryRun: true})
	if len(dry.Files) != 1 || dry.Files[0].State != "held" || dry.Files[0].Gate == nil || dry.Files[0].Gate.Allow ||
		dry.Files[0].Commit != head || dry.Files[0].Reviewed {
		t.Fatalf("dry run: %+v, want the file held by the gate, from %s, unreviewed", dry.Files, head)
	}
	if n, _ := h.ListCards(ctx, host.CardFilter{}); len(n) != 0 {
		t.Fatalf("a dry run wrote %d cards", len(n))
	}
	rep = mustSync(t, h, teamsync.SyncRequest{})
	if len(rep.Held) != 1 || !strings.Contains(strings.Join(rep.Held[0].Reasons, " "), "not on the upstream default branch") {
		t.Fatalf("unreviewed law: held %+v", rep.Held)
	}
	c, err := h.ShowCard(ctx, id)
	if err != nil || c.Status != "candidate" {
		t.Fatalf("unreviewed law is %s (%v), want a candidate", c.Status, err)
	}
	evs, _ := h.CardEvents(ctx, id, false)
	if !strings.Contains(string(evs[0].Data), head) {
		t.Errorf("import event %s does not name the commit %s", evs[0].Data, head)
	}
	// The evidence's human author is the file's word: from an unreviewed
	// commit it is an agent.
	ev, err := h.ShowEvidence(ctx, c.Links[0].EvidenceID, false)
	if err != nil || ev.ActorType != "agent" {
		t.Errorf("evidence of an unreviewed file: actor type %q (%v), want agent", ev.ActorType, err)
	}

	// The team merges it: the upstream default branch holds the commit.
	e.markReviewed(dir)
	rep = mustSync(t, h, teamsync.SyncRequest{})
	if len(rep.Held) != 0 || !slices.Contains(rep.Imported, id) {
		t.Fatalf("reviewed law: imported %v held %+v", rep.Imported, rep.Held)
	}
	if c, _ := h.ShowCard(ctx, id); c.Status != "canonical" {
		t.Errorf("reviewed law is %s, want canonical", c.Status)
	}
}

// sharedLaw syncs a reviewed canonical law into a palace and returns it.
func sharedLaw(t *testing.T) (e *cxEnv, dir string, h *host.Host, id string) {
	t.Helper()
	e = newCxEnv(t)
	dir = e.repo("widgets", "")
	id = "kc_01sharedlawsharedlawshare"
	writeCard(t, dir, id+".md", lawFile(t, id, nil))
	e.commitReviewed(dir, "a law")
	h = e.open(dir, host.Human)
	if rep := mustSync(t, h, teamsync.SyncRequest{}); !slices.Contains(rep.Imported, id) {
		t.Fatalf("imported %v", rep.Imported)
	}
	if c, _ := h.ShowCard(context.Background(), id); c.Status != "canonical" {
		t.Fatalf("law is %s", c.Status)
	}
	return e, dir, h, id
}

// TestSyncEditOfAnAuthoritativeCardIsAGateDecision: edits of a canonical
// card's file and a retirement arriving from an unreviewed commit are
// refused and the local version kept; from the reviewed history, an edit
// the gate allows is taken and one it refuses (a tier its rules do not
// know for the status) is held.
func TestSyncEditOfAnAuthoritativeCardIsAGateDecision(t *testing.T) {
	ctx := context.Background()
	e, dir, h, id := sharedLaw(t)
	edit := func(msg string, mutate func(*cardfile.Card), reviewed bool) teamsync.SyncReport {
		t.Helper()
		writeCard(t, dir, id+".md", lawFile(t, id, mutate))
		if reviewed {
			e.commitReviewed(dir, msg)
		} else {
			e.commitCards(dir, msg)
		}
		return mustSync(t, h, teamsync.SyncRequest{})
	}

	rep := edit("reword", func(c *cardfile.Card) { c.Statement = "Always run migrations on Fridays" }, false)
	if len(rep.Held) != 1 || len(rep.Imported) != 0 {
		t.Fatalf("unreviewed edit: held %+v imported %v", rep.Held, rep.Imported)
	}
	if c, _ := h.ShowCard(ctx, id); c.Statement != "Never run migrations on Fridays" {
		t.Errorf("an unreviewed edit changed the statement to %q", c.Statement)
	}
	rep = edit("retire", func(c *cardfile.Card) { c.Status = "retired" }, false)
	if c, _ := h.ShowCard(ctx, id); c.Status != "canonical" || len(rep.Held) != 1 {
		t.Errorf("an unreviewed retirement: card %s, held %+v", c.Status, rep.Held)
	}

	rep = edit("scope", func(c *cardfile.Card) { c.Scope.Paths = []string{"db/**"} }, true)
	if !slices.Contains(rep.Imported, id) || len(rep.Held) != 0 {
		t.Fatalf("reviewed edit: imported %v held %+v", rep.Imported, rep.Held)
	}
	c, _ := h.ShowCard(ctx, id)
	if !slices.Equal(c.Scope.Paths, []string{"db/**"}) || c.Status != "canonical" {
		t.Errorf("reviewed edit: scope %v status %s", c.Scope.Paths, c.Status)
	}
	evs, _ := h.CardEvents(ctx, id, false)
	if last := evs[len(evs)-1]; last.DecidedBy != domain.DecidedByGate || last.Type != domain.EventImported {
		t.Errorf("the edit's event %+v, want imported, decided by the gate", last)
	}

	rep = edit("tier", func(c *cardfile.Card) { c.Tier = "dao_ren"; c.Status = "promoted"; c.Scope.Paths = []string{"db/**"} }, true)
	if len(rep.Held) != 0 {
		t.Fatalf("reviewed dao_ren edit held: %+v", rep.Held)
	}
	rep = edit("demote without a counterexample", func(c *cardfile.Card) { c.Tier = "dao_ren"; c.Status = "demoted"; c.Scope.Paths = []string{"db/**"} }, true)
	if len(rep.Held) != 1 || !strings.Contains(strings.Join(rep.Held[0].Reasons, " "), "counterexample") {
		t.Errorf("a demotion without a counterexample: held %+v", rep.Held)
	}
	if c, _ := h.ShowCard(ctx, id); c.Status != "promoted" {
		t.Errorf("after a refused demotion the card is %s, want promoted", c.Status)
	}
	edit("retire", func(c *cardfile.Card) { c.Tier = "dao_ren"; c.Status = "retired"; c.Scope.Paths = []string{"db/**"} }, true)
	if c, _ := h.ShowCard(ctx, id); c.Status != "retired" {
		t.Errorf("a reviewed retirement: card is %s", c.Status)
	}
}

// TestSyncClaimsInsideAFileAreClaims: a verification dated 2099 is dated
// by its commit; redacted evidence is neither imported nor spares the
// secret scan; evidence of another anchor is not linked from a file.
func TestSyncClaimsInsideAFileAreClaims(t *testing.T) {
	ctx := context.Background()
	e := newCxEnv(t)
	dir := e.repo("widgets", "")
	h := e.open(dir, host.Human)
	worktreeEv := e.ev(h, "a note of this worktree", "general", "")

	future := "kc_01futurefuturefuturefutur"
	writeCard(t, dir, future+".md", lawFile(t, future, func(c *cardfile.Card) {
		c.Evidence[3].CreatedAt = "2099-01-01T00:00:00.000Z"
	}))
	redacted := "kc_01redactedredactedredacte"
	token := "ghp_k9Xq2Lm8Vb3Nw7Rt5Yz1Pq4Hs6Jd0Fg2Ka8Cu" // palace:allow-secret (a test fixture)
	writeCard(t, dir, redacted+".md", lawFile(t, redacted, func(c *cardfile.Card) {
		c.Evidence[0].Redacted = true
		c.Evidence[0].Content = "deploy with " + token
	}))
	quiet := "kc_01redactedquietredactedqu"
	writeCard(t, dir, quiet+".md", lawFile(t, quiet, func(c *cardfile.Card) {
		c.Evidence[0].Redacted = true
		c.Evidence[0].Content = "[redacted by palace]"
	}))
	foreign := "kc_01foreignforeignforeignfo"
	writeCard(t, dir, foreign+".md", lawFile(t, foreign, func(c *cardfile.Card) {
		c.Citations[0].Evidence, c.Evidence[0].ID = worktreeEv, worktreeEv
		c.Citations[0].SHA256 = cardfile.ContentSHA256("a note of this worktree")
		c.Evidence[0].SHA256, c.Evidence[0].Content = c.Citations[0].SHA256, "a note of this worktree"
	}))
	e.commitReviewed(dir, "claims")
	rep := mustSync(t, h, teamsync.SyncRequest{})

	commitTime := strings.TrimSpace(gitOut(t, dir, "log", "-1", "--format=%cI"))
	fc, err := h.ShowCard(ctx, future)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range fc.Links {
		ev, _ := h.ShowEvidence(ctx, l.EvidenceID, false)
		if strings.HasPrefix(ev.CreatedAt, "2099") {
			t.Errorf("evidence %s keeps the file's date %s (commit %s)", ev.ID, ev.CreatedAt, commitTime)
		}
	}

	has := func(code, path string) bool {
		return slices.ContainsFunc(rep.Findings, func(f cardfile.Finding) bool {
			return f.Code == code && f.Path == cardfile.Dir+"/"+path+".md"
		})
	}
	if !has(cardfile.CodeSecret, redacted) || slices.Contains(rep.Imported, redacted) {
		t.Errorf("a token under redacted: true: findings %v, imported %v; want PC013 and the file skipped", rep.Findings, rep.Imported)
	}
	if !has(cardfile.CodeRedacted, quiet) {
		t.Errorf("redacted evidence without a secret: findings %v, want PC020", rep.Findings)
	}
	qc, err := h.ShowCard(ctx, quiet)
	if err != nil || qc.Status != "candidate" || len(qc.Links) != 5 {
		t.Errorf("the card of redacted evidence: %s with %d links (%v); want a candidate without the redacted citation", qc.Status, len(qc.Links), err)
	}
	if !has(cardfile.CodeReference, foreign) || slices.Contains(rep.Imported, foreign) {
		t.Errorf("evidence of another anchor: findings %v, imported %v; want PC019 and the file skipped", rep.Findings, rep.Imported)
	}
}

// TestSyncFirstImportOfACardPublishedFromAWorktree: a repo card published
// from a worktree card is written without its origin (which never leaves
// the machine), so a fresh palace imports it.
func TestSyncFirstImportOfACardPublishedFromAWorktree(t *testing.T) {
	ctx := context.Background()
	e := newCxEnv(t)
	dir := e.repo("widgets", "")
	h := e.open(dir, host.Human)
	wt := e.card(h, cxCard{statement: "Keep handlers small", tier: "qi", anchor: "worktree", status: "candidate"})
	if _, err := h.Promote(ctx, wt, host.PromoteRequest{Reason: "ok"}); err != nil {
		t.Fatal(err)
	}
	pub, err := h.Publish(ctx, wt, host.PublishRequest{To: "repo", Reason: "for everyone"})
	if err != nil {
		t.Fatal(err)
	}
	mustSync(t, h, teamsync.SyncRequest{})
	b, err := os.ReadFile(filepath.Join(dir, cardfile.Dir, pub.Copy.ID+".md"))
	if err != nil || strings.Contains(string(b), "origin_card") {
		t.Fatalf("the copy's file names its worktree origin (%v):\n%s", err, b)
	}
	e.commitReviewed(dir, "share")
	fresh := newCxEnv(t)
	clone := filepath.Join(fresh.root, "widgets")
	fresh.git(fresh.root, "clone", "-q", dir, clone)
	hb := fresh.open(clone, host.Human)
	rep := mustSync(t, hb, teamsync.SyncRequest{})
	if !slices.Contains(rep.Imported, pub.Copy.ID) || len(rep.Findings) != 0 {
		t.Fatalf("fresh palace: imported %v, findings %v", rep.Imported, rep.Findings)
	}
	if c, _ := hb.ShowCard(ctx, pub.Copy.ID); c.Status != "promoted" {
		t.Errorf("the copy in a fresh palace is %s, want promoted", c.Status)
	}
}

// TestSyncCitationsAddedUpstreamAreLinked: a counterexample a teammate
// links to a shared card reaches the other palace as a link, and contests
// the card there too, though its file's status and fields are unchanged.
func TestSyncCitationsAddedUpstreamAreLinked(t *testing.T) {
	ctx := context.Background()
	p, ha, hb, id := sharedCard(t)
	counter := p.a.ev(ha, "the busy timeout did not stop the deadlock", "storage", "")
	if _, err := ha.Link(ctx, id, host.LinkRequest{Role: "counterexample", EvidenceID: counter}); err != nil {
		t.Fatal(err)
	}
	mustSync(t, ha, teamsync.SyncRequest{})
	p.a.commitCards(p.da, "counterexample")
	p.b.git(p.db, "pull", "-q")
	rep := mustSync(t, hb, teamsync.SyncRequest{})
	if !slices.Contains(rep.Imported, id) {
		t.Fatalf("B imported %v, want %s", rep.Imported, id)
	}
	c, err := hb.ShowCard(ctx, id)
	if err != nil || c.Counts.Counterexample != 1 || c.Contest == nil || c.Status != "promoted" {
		t.Fatalf("B's card: %s, counts %+v, contest %v (%v); want promoted, contested by the counterexample", c.Status, c.Counts, c.Contest, err)
	}
}
