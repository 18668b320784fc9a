package host_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/palacehq/palace/cardfile"
	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/teamsync"
	"github.com/palacehq/palace/store"
)

// fullText lists the cards of the palace at home whose statement or content
// matches expr in the full-text index, as a context request finds them; a
// card indexed twice shows twice.
func fullText(t *testing.T, home, expr string) []string {
	t.Helper()
	ctx := context.Background()
	s, err := store.Open(ctx, filepath.Join(home, "palace.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, _, err := s.Candidates(ctx, store.CandidateQuery{Statuses: domain.AuthoritativeStatuses(), Match: expr, Limit: 100,
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
	p := newSyncPair(t)
	ha := p.a.open(p.da, host.Human)
	busy := promoted(t, p.a, ha, "Set busy timeout before WAL")
	vacuum := promoted(t, p.a, ha, "Vacuum the palace every month")
	mustSync(t, ha, teamsync.SyncRequest{})
	p.a.commitCards(p.da, "share")
	p.b.git(p.db, "pull", "-q")
	hb := p.b.open(p.db, host.Human)
	want := []string{busy, vacuum}
	slices.Sort(want)
	if rep := mustSync(t, hb, teamsync.SyncRequest{}); !reflect.DeepEqual(rep.Imported, want) {
		t.Fatalf("B imported %v, want %v", rep.Imported, want)
	}
	for expr, ids := range map[string][]string{"busy": {busy}, "vacuum": {vacuum}, "set OR vacuum": want} {
		if got := fullText(t, p.b.home, expr); !reflect.DeepEqual(got, ids) {
			t.Errorf("after the import %q finds %v, want %v", expr, got, ids)
		}
	}

	// The statement changes upstream; B imports the file again.
	path := filepath.Join(p.db, cardfile.Dir, busy+cardfile.Ext)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(b), "\nstatement: Set busy timeout before WAL\n", "\nstatement: Set lock timeout before WAL\n", 1)
	if changed == string(b) {
		t.Fatalf("the file of %s does not hold its statement:\n%s", busy, b)
	}
	if err := os.WriteFile(path, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	p.b.commitReviewed(p.db, "reword")
	if rep := mustSync(t, hb, teamsync.SyncRequest{}); !reflect.DeepEqual(rep.Imported, []string{busy}) {
		t.Fatalf("B imported %v after the upstream change, want %s", rep.Imported, busy)
	}
	mustSync(t, hb, teamsync.SyncRequest{}) // nothing to do: nothing indexed again
	for expr, ids := range map[string][]string{"busy": nil, "lock": {busy}, "timeout": {busy}, "set OR vacuum": want} {
		if got := fullText(t, p.b.home, expr); !reflect.DeepEqual(got, ids) {
			t.Errorf("after the re-import %q finds %v, want %v", expr, got, ids)
		}
	}
}
