package host_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/palacehq/palace/cardfile"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/teamsync"
	"github.com/palacehq/palace/store"
)

func countCards(t *testing.T, home string) int {
	t.Helper()
	ctx := context.Background()
	s, err := store.Open(ctx, filepath.Join(home, "palace.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n, err := s.CountCards(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSyncImportInChunks: an import larger than a chunk (files are read and
// decided while earlier chunks are written) imports every good file, the
// gate holding back a forged claim in the last chunk, and skips a
// malformed file after the first chunks with its finding.
func TestSyncImportInChunks(t *testing.T) {
	ctx := context.Background()
	const n = 3500 // four chunks
	repo := benchCardDir(t, n)
	forgedID, body := forged(t)
	writeCard(t, repo, forgedID+cardfile.Ext, body) // sorts after the others
	writeCard(t, repo, "kc_01zzbad.md", []byte("---\nid: kc_01zzbad\nstatement: [unclosed\n---\n"))
	commitBench(t, repo)
	home := filepath.Join(t.TempDir(), "home")
	h, err := host.Open(ctx, host.Options{Home: home, Cwd: repo, Mode: host.Human, Actor: "tester"})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()

	rep, err := h.Sync(ctx, teamsync.SyncRequest{})
	if err != nil {
		t.Fatalf("sync: %v %v", err, rep.Findings)
	}
	if len(rep.Findings) != 1 || rep.Findings[0].Path != cardfile.Dir+"/kc_01zzbad.md" || rep.Findings[0].Code != cardfile.CodeYAML {
		t.Errorf("findings %v, want the one YAML error of kc_01zzbad.md", rep.Findings)
	}
	if len(rep.Imported) != n+1 || len(rep.Held) != 1 || rep.Held[0].CardID != forgedID {
		t.Fatalf("imported %d, held %+v; want %d imported, %s held", len(rep.Imported), rep.Held, n+1, forgedID)
	}
	if got := countCards(t, home); got != n+1 {
		t.Errorf("%d cards after the import, want %d", got, n+1)
	}
	if c, err := h.ShowCard(ctx, forgedID); err != nil || c.Status != "candidate" {
		t.Errorf("forged card: %+v, %v; want a candidate", c.Status, err)
	}
	if c, err := h.ShowCard(ctx, "kc_00000000000000000000003400"); err != nil || c.Status != "promoted" || c.Counts.Supporting != 1 || c.Counts.Verification != 1 {
		t.Errorf("a card of the last chunk: %+v, %v; want promoted with its two citations", c, err)
	}
	again, err := h.Sync(ctx, teamsync.SyncRequest{})
	if err != nil || len(again.Imported) != 0 || again.Unchanged != n || len(again.Held) != 1 {
		t.Errorf("second sync: %d imported, %d unchanged, %d held, %v; want nothing imported and the forged card still held", len(again.Imported), again.Unchanged, len(again.Held), err)
	}
}
