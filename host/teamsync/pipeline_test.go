package teamsync_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/palacehq/palace/cardfile"
	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/internal/jobtest"
	"github.com/palacehq/palace/host/teamsync"
	"github.com/palacehq/palace/store"
)

// cardDir writes n promoted shu card files, each with a supporting and a
// verification piece of evidence, into m's card directory.
func cardDir(t *testing.T, m *mate, n int) {
	t.Helper()
	dir := filepath.Join(m.Dir, cardfile.Dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		sup := fmt.Sprintf("Seen in service %d: handlers that open a transaction must close it on every return path.", i)
		ver := fmt.Sprintf("Verified for service %d: the leak test passes with deferred rollback.", i)
		es, ev := fmt.Sprintf("ev_%026d", 2*i), fmt.Sprintf("ev_%026d", 2*i+1)
		c := cardfile.Card{
			ID: fmt.Sprintf("kc_%026d", i), Statement: fmt.Sprintf("Service %d: defer tx.Rollback right after BeginTx", i),
			Tier: "shu", Status: "promoted", Domain: "project", Field: fmt.Sprintf("field%d", i%40),
			Scope:       cardfile.Scope{Paths: []string{fmt.Sprintf("svc%d/**", i%200)}, Languages: []string{"go"}},
			Persistence: "standard", RenderPref: "auto", CreatedBy: "alice", CreatedAt: "2026-01-01T10:00:00.000Z",
			LastEvent: &cardfile.Event{Type: "promoted", At: "2026-01-02T10:00:00.000Z", Actor: "alice",
				Reviewer: cardfile.Reviewer{Name: "alice", Type: "human"}},
			Citations: []cardfile.Citation{
				{Evidence: es, Role: "supporting", SHA256: cardfile.ContentSHA256(sup)},
				{Evidence: ev, Role: "verification", SHA256: cardfile.ContentSHA256(ver)},
			},
			Evidence: []cardfile.Evidence{
				{ID: es, SHA256: cardfile.ContentSHA256(sup), Domain: "project", Field: "general", Provenance: "runtime",
					Actor: "alice", ActorType: "human", CreatedAt: "2026-01-01T09:00:00.000Z", Content: sup},
				{ID: ev, SHA256: cardfile.ContentSHA256(ver), Domain: "project", Field: "general", Provenance: "runtime",
					Actor: "alice", ActorType: "human", CreatedAt: "2026-01-01T09:30:00.000Z", Content: ver},
			},
		}
		raw, err := cardfile.Encode(c)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, cardfile.FileName(c.ID)), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSyncImportInChunks: an import larger than a chunk (files are read and
// decided while earlier chunks are written) imports every good file, the
// gate holding back a forged claim in the last chunk, and skips a
// malformed file after the first chunks with its finding.
func TestSyncImportInChunks(t *testing.T) {
	ctx := context.Background()
	const n = 3500 // four chunks
	m := newMate(t)
	cardDir(t, m, n)
	forgedID, body := forged(t)
	writeCard(t, m.Dir, forgedID+cardfile.Ext, body) // sorts after the others
	writeCard(t, m.Dir, "kc_01zzbad.md", []byte("---\nid: kc_01zzbad\nstatement: [unclosed\n---\n"))
	m.commitReviewed(t, "cards")

	rep := m.sync(t, teamsync.SyncRequest{})
	if len(rep.Findings) != 1 || rep.Findings[0].Path != cardfile.Dir+"/kc_01zzbad.md" || rep.Findings[0].Code != cardfile.CodeYAML {
		t.Errorf("findings %v, want the one YAML error of kc_01zzbad.md", rep.Findings)
	}
	if len(rep.Imported) != n+1 || len(rep.Held) != 1 || rep.Held[0].CardID != forgedID {
		t.Fatalf("imported %d, held %+v; want %d imported, %s held", len(rep.Imported), rep.Held, n+1, forgedID)
	}
	if got, err := m.Store.CountCards(ctx); err != nil || got != n+1 {
		t.Errorf("%d cards after the import (%v), want %d", got, err, n+1)
	}
	if c := m.card(t, forgedID); c.Status != domain.StatusCandidate {
		t.Errorf("forged card: %s; want a candidate", c.Status)
	}
	last := "kc_00000000000000000000003400"
	if c, counts := m.card(t, last), m.counts(t, last); c.Status != domain.StatusPromoted || counts.Supporting != 1 || counts.Verification != 1 {
		t.Errorf("a card of the last chunk: %s with %+v; want promoted with its two citations", c.Status, counts)
	}
	again := m.sync(t, teamsync.SyncRequest{})
	if len(again.Imported) != 0 || again.Unchanged != n || len(again.Held) != 1 {
		t.Errorf("second sync: %d imported, %d unchanged, %d held; want nothing imported and the forged card still held", len(again.Imported), again.Unchanged, len(again.Held))
	}
}

// fullText lists the cards of m's palace whose statement or content
// matches expr in the full-text index, as a context request finds them; a
// card indexed twice shows twice.
func fullText(t *testing.T, m *mate, expr string) []string {
	t.Helper()
	got, _, err := m.Store.Candidates(context.Background(), store.CandidateQuery{Statuses: domain.AuthoritativeStatuses(), Match: expr, Limit: 100,
		TierOrder: []domain.Tier{"shu"}, PersistenceOrder: []domain.Persistence{"standard"}, AnchorOrder: []string{"x"}})
	if err != nil {
		t.Fatalf("full-text search %q: %v", expr, err)
	}
	var ids []string
	for _, r := range got {
		ids = append(ids, r.ID)
	}
	slices.Sort(ids)
	return ids
}

// TestSyncImportIndexesCardsExactly: cards imported from files are found
// by a full-text search, and a file whose statement changed upstream leaves
// the card found by its new text only, once.
func TestSyncImportIndexesCardsExactly(t *testing.T) {
	a := newMate(t)
	b := cloneOf(t, a)
	busy := a.promoted(t, "Set busy timeout before WAL")
	vacuum := a.promoted(t, "Vacuum the palace every month")
	a.sync(t, teamsync.SyncRequest{})
	a.commit(t, "share")
	b.pull(t, a)
	want := []string{busy, vacuum}
	slices.Sort(want)
	if rep := b.sync(t, teamsync.SyncRequest{}); !reflect.DeepEqual(rep.Imported, want) {
		t.Fatalf("B imported %v, want %v", rep.Imported, want)
	}
	for expr, ids := range map[string][]string{"busy": {busy}, "vacuum": {vacuum}, "set OR vacuum": want} {
		if got := fullText(t, b, expr); !reflect.DeepEqual(got, ids) {
			t.Errorf("after the import %q finds %v, want %v", expr, got, ids)
		}
	}

	// The statement changes upstream; B imports the file again.
	path := filepath.Join(b.Dir, cardfile.Dir, busy+cardfile.Ext)
	raw := b.cardFile(t, busy)
	changed := strings.Replace(string(raw), "\nstatement: Set busy timeout before WAL\n", "\nstatement: Set lock timeout before WAL\n", 1)
	if changed == string(raw) {
		t.Fatalf("the file of %s does not hold its statement:\n%s", busy, raw)
	}
	if err := os.WriteFile(path, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	b.commitReviewed(t, "reword")
	if rep := b.sync(t, teamsync.SyncRequest{}); !reflect.DeepEqual(rep.Imported, []string{busy}) {
		t.Fatalf("B imported %v after the upstream change, want %s", rep.Imported, busy)
	}
	b.sync(t, teamsync.SyncRequest{}) // nothing to do: nothing indexed again
	for expr, ids := range map[string][]string{"busy": nil, "lock": {busy}, "timeout": {busy}, "set OR vacuum": want} {
		if got := fullText(t, b, expr); !reflect.DeepEqual(got, ids) {
			t.Errorf("after the re-import %q finds %v, want %v", expr, got, ids)
		}
	}
}

// TestSyncRewriteWritesOnlyWhatDiffers: a rewrite renders every card sync
// covers again and writes back the files gone from the working tree; the
// files that render the same are left as they are.
func TestSyncRewriteWritesOnlyWhatDiffers(t *testing.T) {
	const n = 70 // more than are read one by one
	m := newMate(t)
	cardDir(t, m, n)
	m.commitReviewed(t, "cards")
	if rep := m.sync(t, teamsync.SyncRequest{}); len(rep.Imported) != n {
		t.Fatalf("imported %d, want %d", len(rep.Imported), n)
	}
	gone := filepath.Join(m.Dir, cardfile.Dir, fmt.Sprintf("kc_%026d.md", 7))
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	rep := m.sync(t, teamsync.SyncRequest{Rewrite: true})
	if len(rep.Exported) != n || len(rep.Imported) != 0 || len(rep.Findings) != 0 {
		t.Fatalf("rewrite: %d exported, %d imported, findings %v; want every card rendered", len(rep.Exported), len(rep.Imported), rep.Findings)
	}
	if out := jobtest.Git(t, m.Dir, "status", "--porcelain"); out != "" {
		t.Errorf("the rewrite left the checkout changed:\n%s", out)
	}
}
