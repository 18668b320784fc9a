package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/store"
)

// Observations are append-only like the evidence they belong to, their
// migration runs again without harm, and CodeCitations lists them under
// the cards whose supporting or verification links cite them — and sees a
// new link or observation at once.
func TestObservationsAndCodeCitations(t *testing.T) {
	s, _ := open(t)
	seed(t, s)
	ctx := context.Background()
	obs := domain.Observation{EvidenceID: "ev_1", Kind: domain.ObservedLines, Path: "store/db.go", LineStart: 3, LineEnd: 5,
		LinesSHA256: strings.Repeat("a", 64), Commit: "c0ffee", ObservedAt: now}
	if err := s.Tx(ctx, func(tx *store.Tx) error { return tx.InsertObservations(ctx, []domain.Observation{obs}) }); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`UPDATE evidence_observations SET path = 'elsewhere.go'`,
		`DELETE FROM evidence_observations`,
		`INSERT INTO evidence_observations(evidence_id, n, kind, path, line_start, line_end, lines_sha256, observed_at) VALUES ('ev_1', 1, 'lines', 'a.go', 5, 3, '', 'now')`,
		`INSERT INTO evidence_observations(evidence_id, n, kind, path, observed_at) VALUES ('ev_nope', 0, 'file', 'a.go', 'now')`,
	} {
		if err := s.Tx(ctx, func(tx *store.Tx) error { return tx.ExecForTest(ctx, q) }); err == nil {
			t.Errorf("the schema let through: %s", q)
		}
	}
	i := store.MigrationIndex("CREATE TABLE IF NOT EXISTS evidence_observations")
	if i < 0 {
		t.Fatal("no migration creates evidence_observations")
	}
	if err := s.Tx(ctx, func(tx *store.Tx) error { return tx.ExecForTest(ctx, store.MigrationForTest(i)) }); err != nil {
		t.Errorf("the migration does not run again: %v", err)
	}
	got, err := s.Observations(ctx, []string{"ev_1", "ev_nope"})
	if err != nil || len(got["ev_1"]) != 1 || got["ev_1"][0] != obs {
		t.Fatalf("Observations = %+v, %v", got, err)
	}

	cits, err := s.CodeCitations(ctx)
	if err != nil || len(cits) != 0 {
		t.Fatalf("before a link: %+v, %v", cits, err)
	}
	link := func(role string) {
		t.Helper()
		if err := s.Tx(ctx, func(tx *store.Tx) error {
			_, err := tx.InsertLink(ctx, domain.Link{CardID: "kc_1", EvidenceID: "ev_1", Role: domain.Role(role), CreatedAt: now})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	link("counterexample")
	if cits, _ = s.CodeCitations(ctx); len(cits) != 0 {
		t.Errorf("a counterexample's observation counts: %+v", cits)
	}
	link("supporting")
	cits, err = s.CodeCitations(ctx)
	if err != nil || len(cits["kc_1"]) != 1 || cits["kc_1"][0].Role != domain.RoleSupporting || cits["kc_1"][0].Observation != obs {
		t.Fatalf("after a supporting link: %+v, %v", cits, err)
	}
	second := obs
	second.N, second.LineStart, second.LineEnd = 1, 7, 7
	if err := s.Tx(ctx, func(tx *store.Tx) error { return tx.InsertObservations(ctx, []domain.Observation{second}) }); err != nil {
		t.Fatal(err)
	}
	if cits, _ = s.CodeCitations(ctx); len(cits["kc_1"]) != 2 {
		t.Errorf("a new observation is not seen: %+v", cits)
	}
}
