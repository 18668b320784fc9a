package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/store"
)

// matching lists the ids of the cards whose text matches expr, as a context
// request finds them (duplicates kept: an index holding a row twice shows).
func matching(t *testing.T, s *store.Store, expr string) []string {
	t.Helper()
	got, _, err := s.Candidates(context.Background(), store.CandidateQuery{Statuses: []domain.Status{domain.StatusCandidate},
		Match: expr, Limit: 10_000, TierOrder: []domain.Tier{"qi"}, AnchorOrder: []string{"an_a"}, PersistenceOrder: []domain.Persistence{"standard"}})
	if err != nil {
		t.Fatalf("match %q: %v", expr, err)
	}
	ids := make([]string, len(got))
	for i, r := range got {
		ids[i] = r.ID
	}
	slices.Sort(ids)
	return ids
}

// checkCardIndex runs FTS5's integrity check with the content table: it
// fails when cards_fts lacks a card, holds one twice, or holds stale text.
func checkCardIndex(ctx context.Context, s *store.Store) error {
	return s.Tx(ctx, func(tx *store.Tx) error {
		return tx.ExecForTest(ctx, `INSERT INTO cards_fts(cards_fts, rank) VALUES ('integrity-check', 1)`)
	})
}

func textCard(id, statement string) domain.Card {
	c := batchCard(id)
	c.Statement, c.StatementNorm, c.Content = statement, statement, "content of "+id
	return c
}

// updateText rewrites c's governed fields through WriteCards, as an
// import of a changed card file does.
func updateText(ctx context.Context, tx *store.Tx, c domain.Card) error {
	_, err := tx.WriteCards(ctx, []store.CardWrite{{Update: &c, Event: domain.Event{ID: "ke_" + c.ID + "_u", CardID: c.ID,
		Type: domain.EventUpdated, Actor: "t", ActorType: domain.ActorHuman, DecidedBy: domain.DecidedByHuman, CreatedAt: c.CreatedAt}}})
	return err
}

// TestCardsIndexedAtCommit: cards inserted in batches and one by one are
// found by a full-text search once committed, a card whose text changes in
// the transaction that inserted it (or a later one) is found by its new
// text only, and the index matches the cards exactly.
func TestCardsIndexedAtCommit(t *testing.T) {
	ctx := context.Background()
	s, _ := open(t)
	batchAnchors(t, s)
	var first []domain.Card
	for i := range 120 { // more than one multi-row statement
		first = append(first, textCard(fmt.Sprintf("kc_a%03d", i), fmt.Sprintf("alpha rule %d", i)))
	}
	err := s.Tx(ctx, func(tx *store.Tx) error {
		if err := tx.InsertCards(ctx, first); err != nil {
			return err
		}
		if err := tx.InsertCard(ctx, textCard("kc_solo", "solo rule")); err != nil {
			return err
		}
		// Changed before the commit indexes it.
		changed := textCard("kc_a007", "gamma rule")
		if err := updateText(ctx, tx, changed); err != nil {
			return err
		}
		// Cards inserted after that change are indexed too.
		return tx.InsertCards(ctx, []domain.Card{textCard("kc_late1", "late rule"), textCard("kc_late2", "late rule")})
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := matching(t, s, "alpha"); len(got) != 119 || slices.Contains(got, "kc_a007") {
		t.Fatalf("alpha matches %d cards (kc_a007 among them: %v), want the 119 unchanged", len(got), slices.Contains(got, "kc_a007"))
	}
	for expr, want := range map[string][]string{"gamma": {"kc_a007"}, "solo": {"kc_solo"}, "late": {"kc_late1", "kc_late2"}} {
		if got := matching(t, s, expr); !slices.Equal(got, want) {
			t.Errorf("%s matches %v, want %v", expr, got, want)
		}
	}
	if err := checkCardIndex(ctx, s); err != nil {
		t.Fatalf("index after the first transaction: %v", err)
	}
	// A later transaction changes a committed card and inserts one.
	err = s.Tx(ctx, func(tx *store.Tx) error {
		if err := tx.InsertCard(ctx, textCard("kc_next", "next rule")); err != nil {
			return err
		}
		return updateText(ctx, tx, textCard("kc_a008", "delta rule"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := matching(t, s, "alpha"); len(got) != 118 {
		t.Errorf("alpha matches %d cards, want 118", len(got))
	}
	for expr, want := range map[string][]string{"delta": {"kc_a008"}, "next": {"kc_next"}, "rule": nil} {
		got := matching(t, s, expr)
		if want == nil {
			if len(got) != 124 {
				t.Errorf("rule matches %d cards, want all 124 once", len(got))
			}
			continue
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s matches %v, want %v", expr, got, want)
		}
	}
	if err := checkCardIndex(ctx, s); err != nil {
		t.Fatalf("index after the second transaction: %v", err)
	}
	// A failed transaction leaves no index rows behind.
	err = s.Tx(ctx, func(tx *store.Tx) error {
		if err := tx.InsertCards(ctx, []domain.Card{textCard("kc_gone", "vanished rule")}); err != nil {
			return err
		}
		return fmt.Errorf("give up")
	})
	if err == nil {
		t.Fatal("the transaction did not fail")
	}
	if got := matching(t, s, "vanished"); len(got) != 0 {
		t.Errorf("vanished matches %v after a rollback", got)
	}
	if err := checkCardIndex(ctx, s); err != nil {
		t.Fatalf("index after a rollback: %v", err)
	}
}

// TestCardIndexCheckBites: the integrity check above fails on a card the
// index lacks (inserted behind the store's back).
func TestCardIndexCheckBites(t *testing.T) {
	ctx := context.Background()
	s, _ := open(t)
	batchAnchors(t, s)
	err := s.Tx(ctx, func(tx *store.Tx) error {
		return tx.ExecForTest(ctx, `INSERT INTO cards(id, statement, statement_norm, content, tier, status, domain, field,
			anchor_id, created_by, created_at, updated_at)
			VALUES ('kc_raw', 'raw rule', 'raw rule', '', 'qi', 'candidate', 'project', 'f', 'an_a', 't', 'x', 'x')`)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := checkCardIndex(ctx, s); err == nil {
		t.Fatal("the integrity check passed with a card missing from the index")
	}
}
