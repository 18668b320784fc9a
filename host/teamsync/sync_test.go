package teamsync_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/palacehq/palace/cardfile"
	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/authority"
	"github.com/palacehq/palace/host/internal/jobtest"
	"github.com/palacehq/palace/host/teamsync"
	"github.com/palacehq/palace/internal/hosterr"
)

func TestSyncTwoClonesKeepIDsAndCitations(t *testing.T) {
	ctx := context.Background()
	a := newMate(t)
	b := cloneOf(t, a)
	id := a.promoted(t, "Set busy timeout before WAL")
	// Cards that must not travel: a worktree card and a global one, both
	// authoritative, and a repo candidate nobody shared.
	wt := a.seed(t, jobtest.Card{Statement: "my scratch note", Tier: domain.TierQi, Anchor: domain.AnchorWorktree, Status: domain.StatusPromoted}).ID
	gl := a.seed(t, jobtest.Card{Statement: "my personal habit", Tier: domain.TierDaoTian, Anchor: domain.AnchorGlobal, Status: domain.StatusPromoted}).ID
	cand := a.seed(t, jobtest.Card{Statement: "an idea to review", Tier: domain.TierQi, Anchor: domain.AnchorRepo}).ID

	rep := a.sync(t, teamsync.SyncRequest{})
	if !reflect.DeepEqual(rep.Exported, []string{id}) || rep.Dir != filepath.Join(a.Dir, cardfile.Dir) || rep.Commit != a.head(t) || rep.WorktreeCards != 1 {
		t.Fatalf("A's sync %+v: want only the promoted repo card %s exported, the worktree card counted", rep, id)
	}
	for _, other := range []string{wt, gl, cand} {
		if _, err := os.Stat(filepath.Join(a.Dir, cardfile.Dir, other+".md")); err == nil {
			t.Errorf("card %s left the machine", other)
		}
	}
	_, err := a.team.Sync(ctx, teamsync.SyncRequest{Share: []string{wt}})
	wantKind(t, "sharing a worktree card", err, hosterr.KindInvalid, "never leave the machine")
	_, err = a.team.Sync(ctx, teamsync.SyncRequest{Share: []string{gl}})
	wantKind(t, "sharing a global card", err, hosterr.KindInvalid, "personal")
	_, err = a.team.Sync(ctx, teamsync.SyncRequest{Share: []string{"kc_01nosuchcard"}})
	wantKind(t, "sharing an unknown card", err, hosterr.KindInvalid, "kc_01nosuchcard")
	file := a.cardFile(t, id)
	a.commit(t, "share the storage rule")
	wantLinks := a.links(t, id)

	b.pull(t, a)
	rep = b.sync(t, teamsync.SyncRequest{})
	if !reflect.DeepEqual(rep.Imported, []string{id}) || len(rep.Held) != 0 || rep.Upstream != "origin/main" {
		t.Fatalf("B imported %v held %v upstream %q, want %s from origin/main", rep.Imported, rep.Held, rep.Upstream, id)
	}
	got := b.links(t, id)
	if len(got) != len(wantLinks) {
		t.Fatalf("B's links %+v, want A's %+v", got, wantLinks)
	}
	for i := range got {
		if got[i].EvidenceID != wantLinks[i].EvidenceID || got[i].Role != wantLinks[i].Role {
			t.Errorf("B's link %d: %s %s, want A's %s %s", i, got[i].Role, got[i].EvidenceID, wantLinks[i].Role, wantLinks[i].EvidenceID)
		}
		ea, _ := a.Store.Evidence(ctx, wantLinks[i].EvidenceID)
		eb, err := b.Store.Evidence(ctx, got[i].EvidenceID)
		if err != nil || eb.Content != ea.Content || eb.ContentSHA256 != ea.ContentSHA256 {
			t.Errorf("B's evidence %s: %+v (%v), want A's content", got[i].EvidenceID, eb, err)
		}
	}
	c := b.card(t, id)
	if c.Status != domain.StatusPromoted || b.Loc.KindOf(c.AnchorID) != domain.AnchorRepo {
		t.Fatalf("B's card %+v: want promoted at the repo anchor", c)
	}
	// Re-rendering the imported card gives the file's bytes.
	if again, err := b.team.CardFile(ctx, id); err != nil || !bytes.Equal(again, file) {
		t.Errorf("B renders the imported card differently (%v):\n%s\n---- file ----\n%s", err, again, file)
	}
	evs := b.events(t, id)
	last := evs[len(evs)-1]
	if last.Type != domain.EventImported || !strings.Contains(string(last.Data), b.head(t)) || last.ToStatus != domain.StatusPromoted || last.DecidedBy != domain.DecidedByGate {
		t.Errorf("B's last event %+v, want imported with commit %s, decided by the gate", last, b.head(t))
	}
	// Idempotent: a second sync changes nothing, on either side.
	rep = b.sync(t, teamsync.SyncRequest{})
	if len(rep.Imported)+len(rep.Exported) != 0 || rep.Unchanged != 1 {
		t.Errorf("second sync in B: %+v, want 1 unchanged", rep)
	}
	if n := b.events(t, id); len(n) != len(evs) {
		t.Errorf("second sync appended events: %d → %d", len(evs), len(n))
	}
	rep = a.sync(t, teamsync.SyncRequest{})
	if len(rep.Imported)+len(rep.Exported) != 0 {
		t.Errorf("second sync in A: %+v", rep)
	}
	if out := jobtest.Git(t, b.Dir, "status", "--porcelain"); out != "" {
		t.Errorf("sync in B changed the checkout:\n%s", out)
	}
}

// TestSyncShareWritesACandidate: a candidate the team should review is
// written when shared, and kept in sync afterwards; Rewrite writes back a
// file removed from the working tree.
func TestSyncShareWritesACandidate(t *testing.T) {
	m := newMate(t)
	cand := m.seed(t, jobtest.Card{Statement: "Try the new linter", Tier: domain.TierQi, Anchor: domain.AnchorRepo}).ID
	if rep := m.sync(t, teamsync.SyncRequest{}); len(rep.Exported) != 0 {
		t.Fatalf("an unshared candidate was exported: %v", rep.Exported)
	}
	if rep := m.sync(t, teamsync.SyncRequest{Share: []string{cand}, DryRun: true}); !reflect.DeepEqual(rep.Exported, []string{cand}) ||
		len(rep.Files) != 1 || rep.Files[0].State != "export" || rep.Files[0].Status != "candidate" {
		t.Fatalf("dry share: %+v", rep)
	}
	if _, err := os.Stat(filepath.Join(m.Dir, cardfile.Dir, cand+".md")); err == nil {
		t.Fatalf("a dry run wrote the file")
	}
	if rep := m.sync(t, teamsync.SyncRequest{Share: []string{cand}}); !reflect.DeepEqual(rep.Exported, []string{cand}) {
		t.Fatalf("share: exported %v", rep.Exported)
	}
	if !bytes.Contains(m.cardFile(t, cand), []byte("status: candidate")) {
		t.Errorf("the shared file does not hold the candidate")
	}
	rep := m.sync(t, teamsync.SyncRequest{})
	if len(rep.Exported) != 0 || rep.Pending == 0 {
		t.Errorf("sync after share: %+v, want the file pending a commit", rep)
	}
	m.commit(t, "share")
	if err := os.Remove(filepath.Join(m.Dir, cardfile.Dir, cand+".md")); err != nil {
		t.Fatal(err)
	}
	if rep := m.sync(t, teamsync.SyncRequest{}); len(rep.Exported) != 0 || len(rep.Findings) != 0 {
		t.Errorf("a file deleted in the working tree: %+v; the committed version counts, nothing to do", rep)
	}
	if rep := m.sync(t, teamsync.SyncRequest{Rewrite: true}); !reflect.DeepEqual(rep.Exported, []string{cand}) {
		t.Errorf("rewrite: exported %v, want the removed file written back", rep.Exported)
	}
}

// TestSyncRemovedFile: a card whose committed file is gone from HEAD stays
// in the palace and is not written again until it changes here.
func TestSyncRemovedFile(t *testing.T) {
	m := newMate(t)
	id := m.promoted(t, "Keep migrations reversible")
	m.sync(t, teamsync.SyncRequest{})
	m.commitReviewed(t, "share")
	m.sync(t, teamsync.SyncRequest{})
	jobtest.Git(t, m.Dir, "rm", "-q", filepath.Join(cardfile.Dir, id+".md"))
	jobtest.Git(t, m.Dir, "commit", "-q", "-m", "remove")
	rep := m.sync(t, teamsync.SyncRequest{})
	if !reflect.DeepEqual(rep.Removed, []string{id}) || len(rep.Exported) != 0 {
		t.Fatalf("sync after the removal: %+v, want %s removed, not exported", rep, id)
	}
	if c := m.card(t, id); c.Status != domain.StatusPromoted {
		t.Errorf("the card is %s after its file was removed, want promoted", c.Status)
	}
	m.link(t, id, domain.RoleTeaching, m.evidence(t, "how to write a down migration"))
	if rep := m.sync(t, teamsync.SyncRequest{}); !reflect.DeepEqual(rep.Exported, []string{id}) {
		t.Errorf("the card changed here: exported %v, want it written again", rep.Exported)
	}
}

// TestSyncForgedPromotedIsHeldAsCandidate: a file claiming promoted on
// too little evidence is a finding of cards check; untracked, sync does
// not read it; committed on an unreviewed branch, the gate refuses it for
// its source; once the upstream default branch holds it, the gate still
// refuses it for its evidence, and the card is a candidate, listed held.
func TestSyncForgedPromotedIsHeldAsCandidate(t *testing.T) {
	ctx := context.Background()
	m := newMate(t)
	id, b := forged(t)
	writeCard(t, m.Dir, id+".md", b)
	statusLine := 1 + strings.Count(string(b[:bytes.Index(b, []byte("status:"))]), "\n")

	rep, err := checker(m).CheckCards(ctx, teamsync.CardsCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	gate := slices.IndexFunc(rep.Findings, func(f cardfile.Finding) bool { return f.Code == cardfile.CodeGate })
	if rep.Errors != 1 || gate < 0 || rep.Findings[gate].Line != statusLine ||
		rep.Findings[gate].Path != ".palace/cards/"+id+".md" || !strings.Contains(rep.Findings[gate].Message, "verification") {
		t.Fatalf("cards check: %+v, want one PC012 at %s:%d naming the missing verification", rep.Findings, id, statusLine)
	}
	if !hasFinding(rep.Findings, cardfile.CodeUncommitted, "") || rep.Warnings != 1 {
		t.Errorf("cards check does not say the file is not committed: %+v", rep.Findings)
	}

	srep := m.sync(t, teamsync.SyncRequest{})
	if len(srep.Imported)+len(srep.Held) != 0 || len(srep.Findings) != 1 || srep.Findings[0].Code != cardfile.CodeUncommitted {
		t.Fatalf("sync of an untracked file: imported %v held %v findings %v; want only the PC018 finding", srep.Imported, srep.Held, srep.Findings)
	}
	if fs, err := m.team.Uncommitted(ctx); err != nil || len(fs) != 1 || fs[0].CardID != id || !strings.Contains(fs[0].Message, "not committed") {
		t.Errorf("uncommitted %+v, %v; want the forged file", fs, err)
	}

	m.commit(t, "forge")
	srep = m.sync(t, teamsync.SyncRequest{})
	if len(srep.Held) != 1 || !strings.Contains(strings.Join(srep.Held[0].Reasons, "; "), "not on the upstream default branch") {
		t.Fatalf("held %+v, want %s held for its unreviewed commit", srep.Held, id)
	}
	m.reviewed(t)
	srep = m.sync(t, teamsync.SyncRequest{})
	if len(srep.Held) != 1 || srep.Held[0].CardID != id || srep.Held[0].Claimed != "promoted" || srep.Held[0].Line != statusLine ||
		!strings.Contains(strings.Join(srep.Held[0].Reasons, "; "), "verification") {
		t.Fatalf("held %+v, want %s claimed promoted at line %d, refused for its evidence", srep.Held, id, statusLine)
	}
	if c := m.card(t, id); c.Status != domain.StatusCandidate {
		t.Fatalf("forged card is %s, want a candidate", c.Status)
	}
	held, err := m.team.HeldCards(ctx, nil)
	if err != nil || len(held) != 1 || held[0].CardID != id || held[0].Claimed != "promoted" || len(held[0].Reasons) == 0 ||
		held[0].Path != cardfile.Dir+"/"+id+".md" {
		t.Errorf("held cards %+v (%v), want the forged card with reasons", held, err)
	}
	if other, err := m.team.HeldCards(ctx, []string{"an_other_anchor"}); err != nil || len(other) != 0 {
		t.Errorf("held cards of another anchor: %+v, %v", other, err)
	}
	// The held card is not written back as a candidate, and a second sync
	// changes nothing.
	srep = m.sync(t, teamsync.SyncRequest{})
	if len(srep.Exported)+len(srep.Imported) != 0 {
		t.Errorf("second sync: %+v", srep)
	}
	if got := m.cardFile(t, id); !bytes.Equal(got, b) {
		t.Errorf("the forged file was rewritten")
	}
}

func TestDecodeHeld(t *testing.T) {
	if c, r := teamsync.DecodeHeld(`{"claimed_status":"canonical","reasons":["a","b"]}`); c != "canonical" || !slices.Equal(r, []string{"a", "b"}) {
		t.Errorf("DecodeHeld(json) = %q %v", c, r)
	}
	if c, r := teamsync.DecodeHeld("refused by hand"); c != "" || !slices.Equal(r, []string{"refused by hand"}) {
		t.Errorf("DecodeHeld(text) = %q %v", c, r)
	}
}

// TestSyncSkipsBadFiles: a committed file with problems is a finding and
// is skipped; the sync goes on and imports the good file beside it.
func TestSyncSkipsBadFiles(t *testing.T) {
	_, good := forged(t)
	good = bytes.Replace(good, []byte("status: promoted"), []byte("status: candidate"), 1)
	other := bytes.ReplaceAll(good, []byte("kc_01forgedforgedforgedforge"), []byte("kc_01othercardothercardother"))
	tests := []struct {
		name, file string
		body       []byte
		code       string
		line       int
	}{
		{"malformed", "kc_01bad.md", []byte("---\nid: kc_01bad\nstatement: [unclosed\n---\n"), cardfile.CodeYAML, 0},
		{"unknown tier", "kc_01othercardothercardother.md", bytes.Replace(other, []byte("tier: shu"), []byte("tier: sage"), 1), cardfile.CodeValue, 4},
		{"duplicate id", "kc_01copy.md", good, cardfile.CodeFileName, 2},
		{"10 MB", "kc_01big.md", bytes.Repeat([]byte("x"), 10<<20), cardfile.CodeTooLarge, 1},
		{"NUL in evidence", "kc_01othercardothercardother.md", bytes.Replace(other, []byte("content: I say so"), []byte(`content: "I say\0so"`), 1), cardfile.CodeCitation, 0},
		{"trigger pattern", "kc_01othercardothercardother.md", bytes.Replace(other, []byte("patterns: []"), []byte("patterns: ['(']"), 1), cardfile.CodeValue, 12},
		{"conflict markers", "kc_01othercardothercardother.md", append(append([]byte("<<<<<<< HEAD\n"), other...), []byte("=======\n>>>>>>> b\n")...), cardfile.CodeConflict, 1},
		{"dangling origin", "kc_01othercardothercardother.md", bytes.Replace(other, []byte("created_by:"), []byte("origin_card: kc_01nowherenowherenowhere\ncreated_by:"), 1), cardfile.CodeReference, 0},
		{"secret", "kc_01othercardothercardother.md", secretFile(t), cardfile.CodeSecret, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			m := newMate(t)
			writeCard(t, m.Dir, "kc_01forgedforgedforgedforge.md", good)
			writeCard(t, m.Dir, tt.file, tt.body)
			m.commitReviewed(t, "cards")
			rep := m.sync(t, teamsync.SyncRequest{})
			var hit bool
			for _, f := range rep.Findings {
				if f.Code == tt.code && f.Path == cardfile.Dir+"/"+tt.file && (tt.line == 0 || f.Line == tt.line) {
					hit = true
				}
			}
			if !hit {
				t.Errorf("findings %v, want %s at %s:%d", rep.Findings, tt.code, tt.file, tt.line)
			}
			if !reflect.DeepEqual(rep.Imported, []string{"kc_01forgedforgedforgedforge"}) {
				t.Errorf("imported %v, want only the good file's card", rep.Imported)
			}
			if n, err := m.Store.CountCards(ctx); err != nil || n != 1 {
				t.Errorf("%d card(s) after the sync (%v), want the good one", n, err)
			}
			crep, err := checker(m).CheckCards(ctx, teamsync.CardsCheckRequest{})
			if err != nil || crep.Errors == 0 {
				t.Errorf("cards check: %+v, %v; want errors", crep, err)
			}
			// Not settled: the next sync reads every card again, and
			// still skips the file.
			if again := m.sync(t, teamsync.SyncRequest{}); !hasFinding(again.Findings, tt.code, cardfile.Dir+"/"+tt.file) || len(again.Imported) != 0 {
				t.Errorf("second sync: %+v", again)
			}
		})
	}
}

// secretFile is a well-formed card file whose evidence holds a token.
func secretFile(t *testing.T) []byte {
	t.Helper()
	content := "deploy with " + token
	c := cardfile.Card{ID: "kc_01othercardothercardother", Statement: "Deploy by hand", Tier: "shu", Status: "candidate", Domain: "project",
		Field: "general", Persistence: "standard", RenderPref: "auto", CreatedBy: "mallory", CreatedAt: "2026-11-01T00:00:00.000Z",
		Citations: []cardfile.Citation{{Evidence: "ev_01secretsecret", Role: "supporting", SHA256: cardfile.ContentSHA256(content)}},
		Evidence: []cardfile.Evidence{{ID: "ev_01secretsecret", SHA256: cardfile.ContentSHA256(content), Domain: "project", Field: "general",
			Provenance: "human", Actor: "mallory", ActorType: "human", CreatedAt: "2026-11-01T00:00:00.000Z", Content: content}},
	}
	b, err := cardfile.Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSyncImportsUpstreamChangesAndReportsConflicts(t *testing.T) {
	a, b, id := sharedCard(t)
	// Settled: the next sync reads only the file rows, and must still see
	// a file that changes.
	b.sync(t, teamsync.SyncRequest{})

	// A demotes; B pulls: B's card is demoted too, by an imported event.
	counter := a.evidence(t, "WAL with busy timeout still deadlocked")
	a.Apply(t, authority.Change{Op: authority.OpDemote, CardID: id, Reason: "deadlock seen",
		Refs: []authority.Refs{{Role: domain.RoleCounterexample, IDs: []string{counter}}}})
	if rep := a.sync(t, teamsync.SyncRequest{}); !reflect.DeepEqual(rep.Exported, []string{id}) {
		t.Fatalf("A exported %v after demote", rep.Exported)
	}
	a.commit(t, "demote")
	b.pull(t, a)
	if rep := b.sync(t, teamsync.SyncRequest{}); !reflect.DeepEqual(rep.Imported, []string{id}) {
		t.Fatalf("B imported %v after the pull", rep.Imported)
	}
	if c := b.card(t, id); c.Status != domain.StatusDemoted || b.counts(t, id).Counterexample != 1 {
		t.Fatalf("B's card %s with %+v, want demoted with the counterexample", c.Status, b.counts(t, id))
	}
	if evs := b.events(t, id); evs[len(evs)-1].FromStatus != domain.StatusPromoted || evs[len(evs)-1].ToStatus != domain.StatusDemoted {
		t.Errorf("B's import event %+v, want promoted → demoted", evs[len(evs)-1])
	}

	// Both sides change the card: B retires it, A adds a teaching link.
	b.Apply(t, authority.Change{Op: authority.OpRetire, CardID: id, Reason: "superseded"})
	a.link(t, id, domain.RoleTeaching, a.evidence(t, "how to set it"))
	a.sync(t, teamsync.SyncRequest{})
	a.commit(t, "teach")
	b.pull(t, a)
	before := b.cardFile(t, id)
	dry := b.sync(t, teamsync.SyncRequest{DryRun: true})
	if len(dry.Conflicts) != 1 || len(dry.Files) != 1 || dry.Files[0].State != "conflict" || dry.Files[0].Status != "retired" {
		t.Errorf("dry run: conflicts %d, files %+v; want the conflict planned", len(dry.Conflicts), dry.Files)
	}
	rep := b.sync(t, teamsync.SyncRequest{})
	if len(rep.Conflicts) != 1 || rep.Conflicts[0].CardID != id || rep.Conflicts[0].File != string(before) ||
		!strings.Contains(rep.Conflicts[0].Palace, "status: retired") || !strings.Contains(rep.Conflicts[0].File, "role: teaching") {
		t.Fatalf("conflicts %+v, want %s with both versions", rep.Conflicts, id)
	}
	if d := rep.Conflicts[0].Diff; !strings.HasPrefix(d, "--- a/"+cardfile.Dir+"/"+id+".md\n+++ b/") || !strings.Contains(d, "\n-status: demoted") ||
		!strings.Contains(d, "\n+status: retired") || !strings.Contains(d, "\n@@ -") {
		t.Errorf("the conflict's diff does not show the status change:\n%s", d)
	}
	if c := b.card(t, id); c.Status != domain.StatusRetired {
		t.Errorf("a conflict changed B's card to %s", c.Status)
	}
	if after := b.cardFile(t, id); !bytes.Equal(after, before) {
		t.Errorf("a conflict rewrote the file")
	}
	_, err := b.team.Sync(context.Background(), teamsync.SyncRequest{Resolve: map[string]string{id: "mine"}})
	wantKind(t, "resolve to neither side", err, hosterr.KindInvalid, "say file")
	// Keeping B's side writes B's card over the file.
	rep = b.sync(t, teamsync.SyncRequest{Resolve: map[string]string{id: "palace"}})
	if !reflect.DeepEqual(rep.Exported, []string{id}) || len(rep.Conflicts) != 0 {
		t.Fatalf("resolve=palace: %+v", rep)
	}
	if after := b.cardFile(t, id); !bytes.Contains(after, []byte("status: retired")) {
		t.Errorf("resolve=palace did not write B's card")
	}
}

// TestSyncResolveTakesTheFile: taking the committed file settles a
// conflict with the file's version, through the gate.
func TestSyncResolveTakesTheFile(t *testing.T) {
	a, b, id := sharedCard(t)
	b.link(t, id, domain.RoleTeaching, b.evidence(t, "B's own note"))
	a.link(t, id, domain.RoleTeaching, a.evidence(t, "A's own note"))
	a.sync(t, teamsync.SyncRequest{})
	a.commit(t, "teach")
	b.pull(t, a)
	if rep := b.sync(t, teamsync.SyncRequest{}); len(rep.Conflicts) != 1 {
		t.Fatalf("want a conflict, got %+v", rep)
	}
	rep := b.sync(t, teamsync.SyncRequest{Resolve: map[string]string{id: "file"}})
	if !reflect.DeepEqual(rep.Imported, []string{id}) || len(rep.Conflicts) != 0 {
		t.Fatalf("resolve=file: %+v", rep)
	}
	if n := b.counts(t, id).Teaching; n != 2 {
		t.Errorf("B's card has %d teaching links after taking the file, want its own and A's", n)
	}
}

func TestSyncRefusals(t *testing.T) {
	ctx := context.Background()
	agent := withTeam(jobtest.New(t, jobtest.Options{Git: true, Agent: true}))
	_, err := agent.team.Sync(ctx, teamsync.SyncRequest{})
	wantKind(t, "agent sync", err, hosterr.KindMode)
	outside := withTeam(jobtest.New(t, jobtest.Options{}))
	_, err = outside.team.Sync(ctx, teamsync.SyncRequest{})
	wantKind(t, "sync outside git", err, hosterr.KindInvalid, "not inside a git checkout")
	if fs, err := outside.team.Uncommitted(ctx); err != nil || fs != nil {
		t.Errorf("uncommitted outside git: %v, %v", fs, err)
	}
	// A cloned repository must not make palace write outside it.
	m := newMate(t)
	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(m.Dir, ".palace")); err != nil {
		t.Fatal(err)
	}
	m.promoted(t, "Never write through links")
	_, err = m.team.Sync(ctx, teamsync.SyncRequest{})
	wantKind(t, "a linked .palace", err, hosterr.KindInvalid, "use .palace/cards")
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Errorf("sync wrote through the link: %v", entries)
	}
}

// TestCardFileDuplicateEvidenceCountsOnce: a file claiming promoted with two
// supporting citations of the same content under two ids has one distinct
// piece of support, so the gate refuses (cards check and sync alike) where
// two would pass.
func TestCardFileDuplicateEvidenceCountsOnce(t *testing.T) {
	ctx := context.Background()
	m := newMate(t)
	same, other := "the migration locked the table for 40 minutes", "a dry run on a copy reproduced the lock"
	ev := func(id, content string) cardfile.Evidence {
		return cardfile.Evidence{ID: id, SHA256: cardfile.ContentSHA256(content), Domain: "project", Field: "general",
			Provenance: "runtime", Actor: "mallory", ActorType: "agent", CreatedAt: "2026-11-01T00:00:00.000Z", Content: content}
	}
	c := cardfile.Card{ID: "kc_01dupdupdupdupdupdupdupdu", Statement: "Run schema migrations online", Tier: "dao_ren",
		Status: "promoted", Domain: "project", Field: "general", Persistence: "standard", RenderPref: "auto",
		CreatedBy: "mallory", CreatedAt: "2026-11-01T00:00:00.000Z",
		LastEvent: &cardfile.Event{Type: "promoted", At: "2026-11-01T00:00:00.000Z", Actor: "mallory",
			Reviewer: cardfile.Reviewer{Name: "mallory", Type: "human"}},
		Citations: []cardfile.Citation{
			{Evidence: "ev_01dupa", Role: "supporting", SHA256: cardfile.ContentSHA256(same)},
			{Evidence: "ev_01dupb", Role: "supporting", SHA256: cardfile.ContentSHA256(same)},
			{Evidence: "ev_01dupc", Role: "verification", SHA256: cardfile.ContentSHA256(other)},
		},
		Evidence: []cardfile.Evidence{ev("ev_01dupa", same), ev("ev_01dupb", same), ev("ev_01dupc", other)},
	}
	b, err := cardfile.Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	writeCard(t, m.Dir, c.ID+".md", b)
	m.commitReviewed(t, "a card")
	rep, err := checker(m).CheckCards(ctx, teamsync.CardsCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Errors != 1 || rep.Findings[0].Code != cardfile.CodeGate || !strings.Contains(rep.Findings[0].Message, "supporting") {
		t.Fatalf("cards check: %+v, want the gate to refuse for lack of distinct supporting evidence", rep.Findings)
	}
	srep := m.sync(t, teamsync.SyncRequest{})
	if len(srep.Held) != 1 || srep.Held[0].CardID != c.ID {
		t.Fatalf("sync held %+v, want %s held as a candidate", srep.Held, c.ID)
	}
	if orig, err := m.Store.DuplicateOf(ctx, "ev_01dupb"); err != nil || orig != "ev_01dupa" {
		t.Errorf("the second id of the same content is marked a duplicate of %q (%v), want ev_01dupa", orig, err)
	}
}

// TestSyncHoldsAClaimOnACardContestedHere: a card contested in B's palace
// keeps its status when B takes a pulled file claiming more (canonical,
// with the evidence the gate asks for): the open contest is a floor, and
// B's import reports the card as held with it. The same file imports as
// canonical into a palace without the contest.
func TestSyncHoldsAClaimOnACardContestedHere(t *testing.T) {
	a, b, id := sharedCard(t)
	deadlock := b.evidence(t, "the service deadlocked in staging with the busy timeout set")
	b.Apply(t, authority.Change{Op: authority.OpContest, CardID: id, Reason: "deadlocked in staging",
		Contest: authority.Contest{Kind: authority.ContestContradiction, Reason: "deadlocked in staging", EvidenceID: deadlock}})

	// A gathers what canonical needs and promotes there.
	a.link(t, id, domain.RoleSupporting, a.evidence(t, "seen again in the importer"))
	a.link(t, id, domain.RoleVerification, a.evidence(t, "verified by the soak test"))
	a.Apply(t, authority.Change{Op: authority.OpPromote, CardID: id, Target: "canonical", Reason: "held in every service"})
	if c := a.card(t, id); c.Status != domain.StatusCanonical {
		t.Fatalf("A's card is %s, want canonical", c.Status)
	}
	a.sync(t, teamsync.SyncRequest{})
	a.commit(t, "canonical")
	b.pull(t, a)

	// The contest changed B's card too: the sync reports a conflict, and
	// taking the file goes through the gate with B's open contest.
	if rep := b.sync(t, teamsync.SyncRequest{}); len(rep.Conflicts) != 1 {
		t.Fatalf("B's sync: %d conflicts, want the contested card's", len(rep.Conflicts))
	}
	rep := b.sync(t, teamsync.SyncRequest{Resolve: map[string]string{id: "file"}})
	if len(rep.Held) != 1 || rep.Held[0].CardID != id || rep.Held[0].Claimed != "canonical" ||
		!strings.Contains(strings.Join(rep.Held[0].Reasons, "; "), "contested") {
		t.Fatalf("B held %+v (imported %v, conflicts %d), want %s held for its open contest", rep.Held, rep.Imported, len(rep.Conflicts), id)
	}
	if c := b.card(t, id); c.Status != domain.StatusPromoted {
		t.Errorf("B's contested card is %s, want it still promoted", c.Status)
	}

	// A third teammate, without the contest, takes the claim.
	c := cloneOf(t, a)
	if rep := c.sync(t, teamsync.SyncRequest{}); len(rep.Held) != 0 {
		t.Fatalf("a palace without the contest held %+v", rep.Held)
	}
	if card := c.card(t, id); card.Status != domain.StatusCanonical {
		t.Errorf("without the contest the card is %s, want canonical", card.Status)
	}
}

// TestSyncCitationsAddedUpstreamAreLinked: a counterexample a teammate
// links to a shared card reaches the other palace as a link, and contests
// the card there too, though its file's status and fields are unchanged.
func TestSyncCitationsAddedUpstreamAreLinked(t *testing.T) {
	ctx := context.Background()
	a, b, id := sharedCard(t)
	a.link(t, id, domain.RoleCounterexample, a.evidence(t, "the busy timeout did not stop the deadlock"))
	a.sync(t, teamsync.SyncRequest{})
	a.commit(t, "counterexample")
	b.pull(t, a)
	rep := b.sync(t, teamsync.SyncRequest{})
	if !slices.Contains(rep.Imported, id) {
		t.Fatalf("B imported %v, want %s", rep.Imported, id)
	}
	open, err := b.Store.OpenContests(ctx, []string{id})
	if c := b.card(t, id); err != nil || b.counts(t, id).Counterexample != 1 || len(open[id]) == 0 || c.Status != domain.StatusPromoted {
		t.Fatalf("B's card: %s, counts %+v, contests %v (%v); want promoted, contested by the counterexample", c.Status, b.counts(t, id), open[id], err)
	}
}
