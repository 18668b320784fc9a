package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/store"
)

// TestMigrationMarksExistingDuplicates takes a palace back to before
// distinct evidence, with the same content recorded three times at one
// anchor (and once at another), and migrates it: every row is kept, the
// repeats are marked as duplicates of the first, and the gate's count of
// links through them is one.
func TestMigrationMarksExistingDuplicates(t *testing.T) {
	ctx := context.Background()
	s, path := open(t)
	v := store.MigrationIndex("CREATE TABLE evidence_duplicates")
	if v < 0 {
		t.Fatal("no migration creates evidence_duplicates")
	}
	ev := func(id, anchor, content string) domain.Evidence {
		return domain.Evidence{ID: id, Content: content, Domain: "project", Field: "f", Provenance: "runtime", AnchorID: anchor,
			ContentSHA256: "sha-" + content, Actor: "t", ActorType: "human", CreatedAt: now}
	}
	err := s.Tx(ctx, func(tx *store.Tx) error {
		for _, a := range []store.Anchor{
			{ID: "an_g", Kind: "global", Identity: "global", CreatedAt: now},
			{ID: "an_a", Kind: "repo", ParentID: "an_g", Identity: "repo:a", CreatedAt: now},
		} {
			if _, err := tx.EnsureAnchor(ctx, a); err != nil {
				return err
			}
		}
		for _, e := range []domain.Evidence{ev("ev_1", "an_a", "x"), ev("ev_2", "an_a", "x"), ev("ev_3", "an_a", "x"), ev("ev_4", "an_g", "x"), ev("ev_5", "an_a", "y")} {
			if err := tx.InsertEvidence(ctx, e); err != nil {
				return err
			}
		}
		if err := tx.InsertCard(ctx, domain.Card{ID: "kc_1", Statement: "s", StatementNorm: "s", Tier: "qi", Status: "candidate", Domain: "project",
			Field: "f", AnchorID: "an_a", Persistence: "standard", RenderPref: "auto", CreatedBy: "t", CreatedAt: now, UpdatedAt: now}); err != nil {
			return err
		}
		for _, id := range []string{"ev_1", "ev_2", "ev_3", "ev_5"} {
			if _, err := tx.InsertLink(ctx, domain.Link{CardID: "kc_1", EvidenceID: id, Role: "supporting", CreatedAt: now}); err != nil {
				return err
			}
		}
		for _, q := range []string{
			"DROP TABLE evidence_duplicates", "DROP TABLE card_contests", "DROP INDEX evidence_sha",
			fmt.Sprintf("PRAGMA user_version = %d", v),
		} {
			if err := tx.ExecForTest(ctx, q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n, err := s.CountEvidence(ctx); err != nil || n != 5 {
		t.Fatalf("evidence after migration = %d, %v; want all 5 rows kept", n, err)
	}
	for id, want := range map[string]string{"ev_1": "", "ev_2": "ev_1", "ev_3": "ev_1", "ev_4": "", "ev_5": ""} {
		if got, err := s.DuplicateOf(ctx, id); err != nil || got != want {
			t.Errorf("DuplicateOf(%s) = %q, %v; want %q", id, got, err, want)
		}
	}
	if c, err := s.CountDuplicates(ctx); err != nil || c[store.DuplicateMigration] != 2 {
		t.Errorf("duplicates by cause = %v, %v; want 2 marked by the migration", c, err)
	}
	links, err := s.Links(ctx, "kc_1")
	if err != nil {
		t.Fatal(err)
	}
	if got := domain.CountRoles(links).Supporting; len(links) != 4 || got != 2 {
		t.Errorf("%d links count as %d supporting, want 4 links counting 2", len(links), got)
	}
}
