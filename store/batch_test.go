package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/store"
)

func batchAnchors(t testing.TB, s *store.Store) {
	t.Helper()
	err := s.Tx(context.Background(), func(tx *store.Tx) error {
		for _, a := range []store.Anchor{
			{ID: "an_g", Kind: "global", Identity: "global", CreatedAt: now},
			{ID: "an_a", Kind: "repo", ParentID: "an_g", Identity: "repo:a", CreatedAt: now},
		} {
			if _, err := tx.EnsureAnchor(context.Background(), a); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func batchEvidence(i int) domain.Evidence {
	c := fmt.Sprintf("row %d: checkpoints stall under load", i)
	return domain.Evidence{ID: fmt.Sprintf("ev_%04d", i), Content: c, Domain: "project", Field: "storage", Provenance: "runtime",
		Tags: []string{"t"}, AnchorID: "an_a", ContentSHA256: fmt.Sprintf("%064d", i), Actor: "t", ActorType: "human", CreatedAt: now}
}

// TestInsertEvidenceRows writes more rows than one statement holds: every
// row is stored, searchable after commit and counted, and duplicates are
// marked.
func TestInsertEvidenceRows(t *testing.T) {
	ctx := context.Background()
	s, _ := open(t)
	batchAnchors(t, s)
	rows := make([]domain.Evidence, 250)
	for i := range rows {
		rows[i] = batchEvidence(i)
	}
	err := s.Tx(ctx, func(tx *store.Tx) error {
		if err := tx.InsertEvidenceRows(ctx, rows); err != nil {
			return err
		}
		return tx.MarkDuplicates(ctx, []store.Duplicate{{EvidenceID: "ev_0249", Original: "ev_0000", Cause: store.DuplicateAllowed, CreatedAt: now}})
	})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := s.CountEvidence(ctx); err != nil || n != len(rows) {
		t.Fatalf("count = %d, %v; want %d", n, err, len(rows))
	}
	got, err := s.EvidenceByIDs(ctx, []string{"ev_0000", "ev_0100", "ev_0249"})
	if err != nil || len(got) != 3 || got["ev_0100"].Content != rows[100].Content || len(got["ev_0100"].Tags) != 1 {
		t.Fatalf("read back %v, %v", got, err)
	}
	found, total, err := s.ListEvidence(ctx, store.EvidenceFilter{Query: "row 137"})
	if err != nil || total == 0 || !containsID(found, "ev_0137") {
		t.Fatalf("full-text search for a batch row: %d found, %v", total, err)
	}
	if orig, err := s.DuplicateOf(ctx, "ev_0249"); err != nil || orig != "ev_0000" {
		t.Fatalf("duplicate of ev_0249 = %q, %v", orig, err)
	}
}

func containsID(es []domain.Evidence, id string) bool {
	for _, e := range es {
		if e.ID == id {
			return true
		}
	}
	return false
}

// TestBatchConstraintNamesTheRow: a batch with one bad row fails naming
// that row, as a single insert does, and writes nothing.
func TestBatchConstraintNamesTheRow(t *testing.T) {
	ctx := context.Background()
	s, _ := open(t)
	batchAnchors(t, s)
	rows := make([]domain.Evidence, 120)
	for i := range rows {
		rows[i] = batchEvidence(i)
	}
	rows[90].Content = "" // the schema refuses empty content
	err := s.Tx(ctx, func(tx *store.Tx) error { return tx.InsertEvidenceRows(ctx, rows) })
	if err == nil || !store.IsConstraint(err) || !strings.Contains(err.Error(), "ev_0090") {
		t.Fatalf("err = %v, want a constraint error naming ev_0090", err)
	}
	if n, err := s.CountEvidence(ctx); err != nil || n != 0 {
		t.Fatalf("count after a failed batch = %d, %v; want 0", n, err)
	}
	// A card batch whose card names an unknown anchor fails the same way.
	cards := []domain.Card{batchCard("kc_1"), batchCard("kc_2")}
	cards[1].AnchorID = "an_missing"
	err = s.Tx(ctx, func(tx *store.Tx) error { return tx.InsertCards(ctx, cards) })
	if err == nil || !strings.Contains(err.Error(), "kc_2") {
		t.Fatalf("err = %v, want an error naming kc_2", err)
	}
	if _, err := s.Card(ctx, "kc_1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("kc_1 after a failed batch: %v, want not found", err)
	}
}

func batchCard(id string) domain.Card {
	return domain.Card{ID: id, Statement: "s " + id, StatementNorm: "s " + id, Tier: "qi", Status: "candidate", Domain: "project",
		Field: "f", AnchorID: "an_a", Persistence: "standard", RenderPref: "auto", CreatedBy: "t", CreatedAt: now, UpdatedAt: now}
}

// TestBatchCardsLinksEventsFiles writes cards, links (one already there),
// events (two for one card, one after an existing event) and file rows
// (one card twice, one already recorded).
func TestBatchCardsLinksEventsFiles(t *testing.T) {
	ctx := context.Background()
	s, _ := open(t)
	batchAnchors(t, s)
	err := s.Tx(ctx, func(tx *store.Tx) error {
		if err := tx.InsertEvidenceRows(ctx, []domain.Evidence{batchEvidence(1), batchEvidence(2)}); err != nil {
			return err
		}
		if err := tx.InsertCard(ctx, batchCard("kc_old")); err != nil {
			return err
		}
		if _, err := tx.InsertLink(ctx, domain.Link{CardID: "kc_old", EvidenceID: "ev_0001", Role: "supporting", CreatedAt: now}); err != nil {
			return err
		}
		if _, err := tx.AppendEvent(ctx, domain.Event{ID: "ce_0", CardID: "kc_old", Type: "created", Actor: "t", ActorType: "human", CreatedAt: now}); err != nil {
			return err
		}
		return tx.PutCardFile(ctx, store.CardFile{CardID: "kc_old", AnchorID: "an_a", Blob: "old", SyncedAt: now})
	})
	if err != nil {
		t.Fatal(err)
	}
	var stored []domain.Event
	err = s.Tx(ctx, func(tx *store.Tx) error {
		if err := tx.InsertCards(ctx, []domain.Card{batchCard("kc_a"), batchCard("kc_b")}); err != nil {
			return err
		}
		if err := tx.InsertLinks(ctx, []domain.Link{
			{CardID: "kc_old", EvidenceID: "ev_0001", Role: "supporting", CreatedAt: now},
			{CardID: "kc_a", EvidenceID: "ev_0001", Role: "supporting", CreatedAt: now},
			{CardID: "kc_a", EvidenceID: "ev_0002", Role: "verification", CreatedAt: now},
		}); err != nil {
			return err
		}
		ev := func(id, card string) domain.Event {
			return domain.Event{ID: id, CardID: card, Type: "imported", Actor: "t", ActorType: "human", CreatedAt: now}
		}
		var err error
		if stored, err = tx.AppendEvents(ctx, []domain.Event{ev("ce_1", "kc_a"), ev("ce_2", "kc_old"), ev("ce_3", "kc_a"), ev("ce_4", "kc_b")}); err != nil {
			return err
		}
		return tx.PutCardFiles(ctx, []store.CardFile{
			{CardID: "kc_a", AnchorID: "an_a", Blob: "first", SyncedAt: now},
			{CardID: "kc_old", AnchorID: "an_a", Blob: "new", EventSeq: 2, SyncedAt: now},
			{CardID: "kc_a", AnchorID: "an_a", Blob: "second", EventSeq: 2, SyncedAt: now},
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int
	for _, e := range stored {
		seqs = append(seqs, e.Seq)
	}
	if fmt.Sprint(seqs) != "[1 2 2 1]" {
		t.Fatalf("assigned seqs %v, want [1 2 2 1]", seqs)
	}
	evs, err := s.Events(ctx, "kc_a")
	if err != nil || len(evs) != 2 || evs[0].ID != "ce_1" || evs[1].Seq != 2 {
		t.Fatalf("events of kc_a: %+v, %v", evs, err)
	}
	links, err := s.LinksFor(ctx, []string{"kc_old", "kc_a"})
	if err != nil || len(links["kc_old"]) != 1 || len(links["kc_a"]) != 2 {
		t.Fatalf("links: %v, %v", links, err)
	}
	files, err := s.CardFiles(ctx, "an_a")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range files {
		got[f.CardID] = fmt.Sprintf("%s@%d", f.Blob, f.EventSeq)
	}
	if got["kc_a"] != "second@2" || got["kc_old"] != "new@2" || len(got) != 2 {
		t.Fatalf("file rows %v, want kc_a second@2 and kc_old new@2", got)
	}
}
