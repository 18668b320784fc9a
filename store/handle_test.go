package store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/palacehq/palace/store"
)

// TestOpenDeferred checks that a deferred store on a missing path answers
// reads (also while a write creates the file, under -race) without creating
// anything, that the first write creates the file with the current schema,
// and that what it wrote is there for the same store and for a new one.
func TestOpenDeferred(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "home", "palace.db")
	s, err := store.OpenDeferred(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if a, err := s.Anchors(ctx); err != nil || len(a) != 0 {
		t.Fatalf("anchors of an empty deferred store: %v, %v", a, err)
	}
	if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a read created %s (stat: %v)", filepath.Dir(path), err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 20 {
				if _, err := s.Anchors(ctx); err != nil {
					t.Errorf("read during the first write: %v", err)
					return
				}
			}
		})
	}
	contextSeed(t, s)
	wg.Wait()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the first write did not create the file: %v", err)
	}
	if a, err := s.Anchors(ctx); err != nil || len(a) != 3 {
		t.Fatalf("anchors after the first write: %d, %v; want 3", len(a), err)
	}
	again, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if v, err := again.Version(ctx); err != nil || v != store.SchemaVersion {
		t.Errorf("schema of the created file = %d, %v; want %d", v, err, store.SchemaVersion)
	}
	if a, err := again.Anchors(ctx); err != nil || len(a) != 3 {
		t.Errorf("anchors read by a new store: %d, %v; want 3", len(a), err)
	}
}
