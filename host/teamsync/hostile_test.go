package teamsync_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/palacehq/palace/cardfile"
	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/authority"
	"github.com/palacehq/palace/host/internal/jobtest"
	"github.com/palacehq/palace/host/teamsync"
	"github.com/palacehq/palace/policies"
)

// TestSyncForgedLawNeedsTheReviewedHistory: a forged canonical law is not
// read from the working tree, is held while its commit is on no reviewed
// branch (the import event naming that commit), and becomes canonical
// only once the upstream default branch holds it — the team merged it.
func TestSyncForgedLawNeedsTheReviewedHistory(t *testing.T) {
	ctx := context.Background()
	m := newMate(t)
	id := "kc_01forgedlawforgedlawforge"
	writeCard(t, m.Dir, id+".md", lawFile(t, id, nil))

	rep := m.sync(t, teamsync.SyncRequest{})
	if len(rep.Imported) != 0 || !hasFinding(rep.Findings, cardfile.CodeUncommitted, "") {
		t.Fatalf("untracked law: imported %v, findings %v; want nothing imported and PC018", rep.Imported, rep.Findings)
	}
	dry := m.sync(t, teamsync.SyncRequest{DryRun: true})
	if len(dry.Files) != 0 {
		t.Errorf("a dry run plans untracked files: %+v", dry.Files)
	}

	jobtest.Git(t, m.Dir, "checkout", "-q", "-b", "feature")
	m.commit(t, "a law")
	head := m.head(t)
	// The branch is pushed but not merged: origin/main is the first commit.
	jobtest.Git(t, m.Dir, "update-ref", "refs/remotes/origin/main", "HEAD~1")
	dry = m.sync(t, teamsync.SyncRequest{DryRun: true})
	if len(dry.Files) != 1 || dry.Files[0].State != "held" || dry.Files[0].Gate == nil || dry.Files[0].Gate.Allow ||
		dry.Files[0].Commit != head || dry.Files[0].Reviewed || dry.Files[0].Claimed != "canonical" {
		t.Fatalf("dry run: %+v, want the file held by the gate, from %s, unreviewed", dry.Files, head)
	}
	if n, _ := m.Store.CountCards(ctx); n != 0 {
		t.Fatalf("a dry run wrote %d cards", n)
	}
	rep = m.sync(t, teamsync.SyncRequest{})
	if len(rep.Held) != 1 || !strings.Contains(strings.Join(rep.Held[0].Reasons, " "), "not on the upstream default branch") {
		t.Fatalf("unreviewed law: held %+v", rep.Held)
	}
	c := m.card(t, id)
	if c.Status != domain.StatusCandidate {
		t.Fatalf("unreviewed law is %s, want a candidate", c.Status)
	}
	evs := m.events(t, id)
	if !strings.Contains(string(evs[0].Data), head) {
		t.Errorf("import event %s does not name the commit %s", evs[0].Data, head)
	}
	// The gate saw where the claim came from.
	var dec struct {
		Source *policies.GateSource `json:"source"`
	}
	if err := jsonUnmarshal(evs[0].Decision, &dec); err != nil || dec.Source == nil || dec.Source.Channel != policies.SourceCardFile ||
		dec.Source.Path != cardfile.Dir+"/"+id+".md" || dec.Source.Commit != head || dec.Source.Upstream != "origin/main" || dec.Source.Reviewed {
		t.Errorf("the import's gate source %+v (%v, decision %s): want the card file, its commit, origin/main, unreviewed", dec.Source, err, evs[0].Decision)
	}
	// The evidence's human author is the file's word: from an unreviewed
	// commit it is an agent.
	links := m.links(t, id)
	ev, err := m.Store.Evidence(ctx, links[0].EvidenceID)
	if err != nil || ev.ActorType != domain.ActorAgent {
		t.Errorf("evidence of an unreviewed file: actor type %q (%v), want agent", ev.ActorType, err)
	}

	// The team merges it: the upstream default branch holds the commit.
	m.reviewed(t)
	rep = m.sync(t, teamsync.SyncRequest{})
	if len(rep.Held) != 0 || !slices.Contains(rep.Imported, id) {
		t.Fatalf("reviewed law: imported %v held %+v", rep.Imported, rep.Held)
	}
	if c := m.card(t, id); c.Status != domain.StatusCanonical {
		t.Errorf("reviewed law is %s, want canonical", c.Status)
	}
}

// sharedLaw syncs a reviewed canonical law into a palace and returns it.
func sharedLaw(t *testing.T) (m *mate, id string) {
	t.Helper()
	m = newMate(t)
	id = "kc_01sharedlawsharedlawshare"
	writeCard(t, m.Dir, id+".md", lawFile(t, id, nil))
	m.commitReviewed(t, "a law")
	if rep := m.sync(t, teamsync.SyncRequest{}); !slices.Contains(rep.Imported, id) {
		t.Fatalf("imported %v", rep.Imported)
	}
	if c := m.card(t, id); c.Status != domain.StatusCanonical {
		t.Fatalf("law is %s", c.Status)
	}
	return m, id
}

// TestSyncEditOfAnAuthoritativeCardIsAGateDecision: edits of a canonical
// card's file and a retirement arriving from an unreviewed commit are
// refused and the local version kept; from the reviewed history, an edit
// the gate allows is taken and one it refuses (a demotion without a
// counterexample) is held.
func TestSyncEditOfAnAuthoritativeCardIsAGateDecision(t *testing.T) {
	m, id := sharedLaw(t)
	edit := func(msg string, mutate func(*cardfile.Card), reviewed bool) teamsync.SyncReport {
		t.Helper()
		writeCard(t, m.Dir, id+".md", lawFile(t, id, mutate))
		if reviewed {
			m.commitReviewed(t, msg)
		} else {
			m.commit(t, msg)
		}
		return m.sync(t, teamsync.SyncRequest{})
	}

	rep := edit("reword", func(c *cardfile.Card) { c.Statement = "Always run migrations on Fridays" }, false)
	if len(rep.Held) != 1 || len(rep.Imported) != 0 {
		t.Fatalf("unreviewed edit: held %+v imported %v", rep.Held, rep.Imported)
	}
	if c := m.card(t, id); c.Statement != "Never run migrations on Fridays" {
		t.Errorf("an unreviewed edit changed the statement to %q", c.Statement)
	}
	// Held, the claim is asked again at the next sync: still unreviewed.
	if again := m.sync(t, teamsync.SyncRequest{}); len(again.Held) != 1 {
		t.Errorf("the held edit asked again: held %+v", again.Held)
	}
	rep = edit("retire", func(c *cardfile.Card) { c.Status = "retired" }, false)
	if c := m.card(t, id); c.Status != domain.StatusCanonical || len(rep.Held) != 1 {
		t.Errorf("an unreviewed retirement: card %s, held %+v", c.Status, rep.Held)
	}

	rep = edit("scope", func(c *cardfile.Card) { c.Scope.Paths = []string{"db/**"} }, true)
	if !slices.Contains(rep.Imported, id) || len(rep.Held) != 0 {
		t.Fatalf("reviewed edit: imported %v held %+v", rep.Imported, rep.Held)
	}
	c := m.card(t, id)
	if !slices.Equal(c.Scope.Paths, []string{"db/**"}) || c.Status != domain.StatusCanonical {
		t.Errorf("reviewed edit: scope %v status %s", c.Scope.Paths, c.Status)
	}
	evs := m.events(t, id)
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
	if c := m.card(t, id); c.Status != domain.StatusPromoted {
		t.Errorf("after a refused demotion the card is %s, want promoted", c.Status)
	}
	edit("retire", func(c *cardfile.Card) { c.Tier = "dao_ren"; c.Status = "retired"; c.Scope.Paths = []string{"db/**"} }, true)
	if c := m.card(t, id); c.Status != domain.StatusRetired {
		t.Errorf("a reviewed retirement: card is %s", c.Status)
	}
}

// TestSyncClaimsInsideAFileAreClaims: a verification dated 2099 is dated
// by its commit; redacted evidence is neither imported nor spares the
// secret scan; evidence of another anchor or with another content than
// this palace's is not taken from a file.
func TestSyncClaimsInsideAFileAreClaims(t *testing.T) {
	ctx := context.Background()
	m := newMate(t)
	worktreeEv := m.evidenceAt(t, domain.AnchorWorktree, "a note of this worktree")
	repoEv := m.evidence(t, "a note of this repository")

	future := "kc_01futurefuturefuturefutur"
	writeCard(t, m.Dir, future+".md", lawFile(t, future, func(c *cardfile.Card) {
		c.Evidence[3].CreatedAt = "2099-01-01T00:00:00.000Z"
	}))
	redacted := "kc_01redactedredactedredacte"
	writeCard(t, m.Dir, redacted+".md", lawFile(t, redacted, func(c *cardfile.Card) {
		c.Evidence[0].Redacted = true
		c.Evidence[0].Content = "deploy with " + token
	}))
	quiet := "kc_01redactedquietredactedqu"
	writeCard(t, m.Dir, quiet+".md", lawFile(t, quiet, func(c *cardfile.Card) {
		c.Evidence[0].Redacted = true
		c.Evidence[0].Content = "[redacted by palace]"
	}))
	cite := func(id, content string) func(c *cardfile.Card) {
		return func(c *cardfile.Card) {
			c.Citations[0].Evidence, c.Evidence[0].ID = id, id
			c.Citations[0].SHA256 = cardfile.ContentSHA256(content)
			c.Evidence[0].SHA256, c.Evidence[0].Content = c.Citations[0].SHA256, content
		}
	}
	foreign := "kc_01foreignforeignforeignfo"
	writeCard(t, m.Dir, foreign+".md", lawFile(t, foreign, cite(worktreeEv, "a note of this worktree")))
	edited := "kc_01editededitededitededit"
	writeCard(t, m.Dir, edited+".md", lawFile(t, edited, cite(repoEv, "a note of this repository, edited")))
	m.commitReviewed(t, "claims")
	rep := m.sync(t, teamsync.SyncRequest{})

	for _, l := range m.links(t, future) {
		ev, _ := m.Store.Evidence(ctx, l.EvidenceID)
		if strings.HasPrefix(ev.CreatedAt, "2099") {
			t.Errorf("evidence %s keeps the file's date %s", ev.ID, ev.CreatedAt)
		}
	}
	has := func(code, id string) bool { return hasFinding(rep.Findings, code, cardfile.Dir+"/"+id+".md") }
	if !has(cardfile.CodeSecret, redacted) || slices.Contains(rep.Imported, redacted) {
		t.Errorf("a token under redacted: true: findings %v, imported %v; want PC013 and the file skipped", rep.Findings, rep.Imported)
	}
	if !has(cardfile.CodeRedacted, quiet) {
		t.Errorf("redacted evidence without a secret: findings %v, want PC020", rep.Findings)
	}
	if qc := m.card(t, quiet); qc.Status != domain.StatusCandidate || len(m.links(t, quiet)) != 5 {
		t.Errorf("the card of redacted evidence: %s with %d links; want a candidate without the redacted citation", qc.Status, len(m.links(t, quiet)))
	}
	if !has(cardfile.CodeReference, foreign) || slices.Contains(rep.Imported, foreign) {
		t.Errorf("evidence of another anchor: findings %v, imported %v; want PC019 and the file skipped", rep.Findings, rep.Imported)
	}
	if !has(cardfile.CodeEvidenceSame, edited) || slices.Contains(rep.Imported, edited) {
		t.Errorf("evidence edited in a file: findings %v, imported %v; want PC021 and the file skipped", rep.Findings, rep.Imported)
	}
	if ev, _ := m.Store.Evidence(ctx, repoEv); ev.Content != "a note of this repository" {
		t.Errorf("a file edited this palace's evidence to %q", ev.Content)
	}
}

// TestSyncFirstImportOfACardPublishedFromAWorktree: a repo card published
// from a worktree card is written without its origin (which never leaves
// the machine), so a fresh palace imports it; an origin that travels is
// kept.
func TestSyncFirstImportOfACardPublishedFromAWorktree(t *testing.T) {
	m := newMate(t)
	wt := m.promotedAt(t, domain.AnchorWorktree, "Keep handlers small")
	pub := m.Apply(t, authority.Change{Op: authority.OpPublish, CardID: wt, Target: "repo", Reason: "for everyone"})
	copyID := pub.CopyID
	if copyID == wt || m.card(t, copyID).OriginCard != wt {
		t.Fatalf("publish made %s (origin %q), want a copy of %s", copyID, m.card(t, copyID).OriginCard, wt)
	}
	m.sync(t, teamsync.SyncRequest{})
	if b := m.cardFile(t, copyID); strings.Contains(string(b), "origin_card") {
		t.Fatalf("the copy's file names its worktree origin:\n%s", b)
	}
	m.commitReviewed(t, "share")
	fresh := cloneOf(t, m)
	rep := fresh.sync(t, teamsync.SyncRequest{})
	if !slices.Contains(rep.Imported, copyID) || len(rep.Findings) != 0 {
		t.Fatalf("fresh palace: imported %v, findings %v", rep.Imported, rep.Findings)
	}
	if c := fresh.card(t, copyID); c.Status != domain.StatusPromoted {
		t.Errorf("the copy in a fresh palace is %s, want promoted", c.Status)
	}
}

// TestSyncNonRegularEntries: a link or a submodule committed in the card
// directory is a warning and is not read.
func TestSyncNonRegularEntries(t *testing.T) {
	m := newMate(t)
	dir := filepath.Join(m.Dir, cardfile.Dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "elsewhere.md")
	if err := os.WriteFile(target, lawFile(t, "kc_01linkedlinkedlinkedlinke", nil), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, "kc_01linkedlinkedlinkedlinke.md")); err != nil {
		t.Fatal(err)
	}
	writeCard(t, m.Dir, ".hidden.md", []byte("not a card"))
	writeCard(t, m.Dir, "README.txt", []byte("not a card"))
	m.commitReviewed(t, "a link")
	rep := m.sync(t, teamsync.SyncRequest{})
	if len(rep.Findings) != 1 || rep.Findings[0].Code != cardfile.CodeNotRegular || !strings.Contains(rep.Findings[0].Message, "120000") || len(rep.Imported) != 0 {
		t.Fatalf("a committed link: findings %v, imported %v; want one PC warning naming mode 120000", rep.Findings, rep.Imported)
	}
}
