package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/store"
)

// A card written before statements compared in NFC keeps a decomposed
// normalized statement; the migration computes it again, so the
// duplicate check of a new card finds it.
func TestMigrationRenormalizesStatements(t *testing.T) {
	s, path := open(t)
	seed(t, s)
	ctx := context.Background()
	const nfd = "Cafe\u0301 keys are UTF-8"
	err := s.Tx(ctx, func(tx *store.Tx) error {
		return tx.InsertCard(ctx, domain.Card{ID: "kc_nfd", Statement: nfd, StatementNorm: "cafe\u0301 keys are utf-8", Tier: "qi",
			Status: "promoted", Domain: "project", Field: "general", AnchorID: "an_g", Persistence: "standard",
			RenderPref: "auto", CreatedBy: "a", CreatedAt: now, UpdatedAt: now})
	})
	if err != nil {
		t.Fatal(err)
	}
	from := store.MigrationFor("palace_statement_norm(statement)")
	if from < 0 {
		t.Fatal("no migration recomputes the normalized statements")
	}
	// Run it, and every later entry, again: each must hold whatever its
	// number and however often it runs.
	for range 2 {
		if err := s.Tx(ctx, func(tx *store.Tx) error { return tx.ExecForTest(ctx, fmt.Sprintf("PRAGMA user_version = %d", from)) }); err != nil {
			t.Fatal(err)
		}
		s.Close()
		if s, err = store.Open(ctx, path); err != nil {
			t.Fatal(err)
		}
	}
	defer s.Close()
	want := domain.NormalizeStatement("Caf\u00e9 keys are UTF-8")
	err = s.Tx(ctx, func(tx *store.Tx) error {
		first, dup, err := tx.CardByStatement(ctx, "an_g", want, domain.Statuses)
		if err != nil {
			return err
		}
		if !dup || first.ID != "kc_nfd" {
			return fmt.Errorf("CardByStatement(%q) = %s, %v; want kc_nfd", want, first.ID, dup)
		}
		if first.Statement != nfd {
			return fmt.Errorf("the statement changed to %q: only its normalized form is recomputed", first.Statement)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestNormalizeStatementIsNFC(t *testing.T) {
	for _, c := range []struct{ a, b string }{
		{"Caf\u00e9 au lait.", "cafe\u0301 AU  lait"},
		{"\u00c5ngstr\u00f6m units", "A\u030angstro\u0308m units"},
	} {
		if x, y := domain.NormalizeStatement(c.a), domain.NormalizeStatement(c.b); x != y {
			t.Errorf("NormalizeStatement(%q) = %q, NormalizeStatement(%q) = %q: one statement, two forms", c.a, x, c.b, y)
		}
	}
}
