package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/palacehq/palace/store"
)

// Redaction is the one change evidence allows: its content becomes the
// notice of its redaction row, once; nothing else may change, and the
// full-text index follows.
func TestRedactEvidence(t *testing.T) {
	s, _ := open(t)
	seed(t, s)
	ctx := context.Background()
	exec := func(q string) error { return s.Tx(ctx, func(tx *store.Tx) error { return tx.ExecForTest(ctx, q) }) }
	search := func(q string) int {
		_, n, err := s.ListEvidence(ctx, store.EvidenceFilter{Query: q})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if search("readers") != 1 {
		t.Fatal("seeded evidence not indexed")
	}

	// Without a redaction row, content may not change.
	if err := exec("UPDATE evidence SET content = 'notice' WHERE id = 'ev_1'"); err == nil || !store.IsConstraint(err) {
		t.Errorf("update without a redaction: %v", err)
	}
	r := store.Redaction{EvidenceID: "ev_1", Notice: "[redacted: leaked]", Reason: "leaked", Actor: "ann", ActorType: "human", CreatedAt: now}
	if err := s.Tx(ctx, func(tx *store.Tx) error { return tx.RedactEvidence(ctx, r) }); err != nil {
		t.Fatal(err)
	}
	e, err := s.Evidence(ctx, "ev_1")
	if err != nil || e.Content != r.Notice || e.ContentSHA256 != "x" || e.Field != "storage" || e.CreatedAt != now {
		t.Fatalf("after redaction: %+v, %v", e, err)
	}
	if got, err := s.EvidenceRedaction(ctx, "ev_1"); err != nil || got != r {
		t.Errorf("redaction row %+v, %v", got, err)
	}
	if search("readers") != 0 || search("leaked") != 1 {
		t.Errorf("index: old text found %d, notice found %d", search("readers"), search("leaked"))
	}

	// Nothing else may change, redacted or not, and the redaction stays.
	for _, q := range []string{
		"UPDATE evidence SET content = 'other' WHERE id = 'ev_1'",
		"UPDATE evidence SET field = 'x' WHERE id = 'ev_1'",
		"UPDATE evidence SET content_sha256 = 'y' WHERE id = 'ev_1'",
		"UPDATE evidence SET content = '[redacted: leaked]', actor = 'eve' WHERE id = 'ev_1'",
		"UPDATE evidence_redactions SET reason = 'x'",
		"DELETE FROM evidence_redactions",
		"DELETE FROM evidence WHERE id = 'ev_1'",
	} {
		if err := exec(q); err == nil || !store.IsConstraint(err) {
			t.Errorf("%s: err = %v, want constraint error", q, err)
		}
	}
	if err := s.Tx(ctx, func(tx *store.Tx) error { return tx.RedactEvidence(ctx, r) }); !errors.Is(err, store.ErrRedacted) {
		t.Errorf("second redaction: %v", err)
	}
	r.EvidenceID = "ev_none"
	if err := s.Tx(ctx, func(tx *store.Tx) error { return tx.RedactEvidence(ctx, r) }); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown evidence: %v", err)
	}
	if _, err := s.EvidenceRedaction(ctx, "ev_none"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("redaction of unredacted evidence: %v", err)
	}
	if ok, err := s.IntegrityCheck(ctx); err != nil || len(ok) != 1 || ok[0] != "ok" {
		t.Errorf("integrity %v, %v", ok, err)
	}
}
