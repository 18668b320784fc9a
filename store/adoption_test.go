package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/palacehq/palace/store"
)

func TestAdoptionEventsAreAppendOnly(t *testing.T) {
	s, _ := open(t)
	contextSeed(t, s)
	ctx := context.Background()
	add := func(e store.AdoptionEvent) error {
		e.Actor, e.ActorType = "claude", "agent"
		if e.CreatedAt == "" {
			e.CreatedAt = "2026-01-05T10:00:00.000Z"
		}
		return s.InsertAdoption(ctx, e)
	}
	for _, e := range []store.AdoptionEvent{
		{ID: "ad_1", Signal: "used", CardID: "kc_1", RequestTerms: "sqlite wal"},
		{ID: "ad_2", Signal: "rejected", CardID: "kc_1", CreatedAt: "2026-01-07T10:00:00.000Z"},
		{ID: "ad_3", Signal: "miss", Note: "how to vacuum", CreatedAt: "2026-01-07T11:00:00.000Z"},
		{ID: "ad_4", Signal: "contradiction", CardID: "kc_2", CreatedAt: "2026-01-08T11:00:00.000Z"},
	} {
		if err := add(e); err != nil {
			t.Fatalf("%s: %v", e.ID, err)
		}
	}
	for name, e := range map[string]store.AdoptionEvent{
		"card signal without a card": {ID: "ad_x1", Signal: "used"},
		"unknown signal":             {ID: "ad_x2", Signal: "liked", CardID: "kc_1"},
		"unknown card":               {ID: "ad_x3", Signal: "used", CardID: "kc_nope"},
		"unknown evidence":           {ID: "ad_x4", Signal: "contradiction", CardID: "kc_1", EvidenceID: "ev_nope"},
	} {
		if err := add(e); !store.IsConstraint(err) {
			t.Errorf("%s: err = %v, want a constraint error", name, err)
		}
	}
	for _, q := range []string{"UPDATE adoption_events SET signal = 'used' WHERE id = 'ad_2'", "DELETE FROM adoption_events WHERE id = 'ad_1'"} {
		if err := s.Tx(ctx, func(tx *store.Tx) error { return tx.ExecForTest(ctx, q) }); err == nil {
			t.Errorf("%s succeeded on an append-only table", q)
		}
	}
	sigs, err := s.CardSignals(ctx, []string{"kc_1", "kc_2", "kc_3"}, "2026-01-06T00:00:00.000Z")
	if err != nil || len(sigs) != 2 || sigs[0].Signal != "rejected" || sigs[1].CardID != "kc_2" {
		t.Errorf("signals since 01-06 = %+v, %v; want ad_2 then ad_4", sigs, err)
	}
	all, err := s.ListAdoption(ctx, store.AdoptionFilter{CardIDs: []string{"kc_1"}})
	if err != nil || len(all) != 2 || all[0].RequestTerms != "sqlite wal" {
		t.Errorf("kc_1's events = %+v, %v", all, err)
	}
	misses, err := s.ListAdoption(ctx, store.AdoptionFilter{Signal: "miss"})
	if err != nil || len(misses) != 1 || misses[0].CardID != "" || misses[0].Note != "how to vacuum" {
		t.Errorf("misses = %+v, %v", misses, err)
	}
}

func TestRequestTermsArePrunedWithTelemetry(t *testing.T) {
	s, _ := open(t)
	ctx := context.Background()
	for _, r := range []store.RequestTerms{
		{RequestID: "rq_old", Terms: "a b", CreatedAt: "2026-01-01T10:00:00.000Z"},
		{RequestID: "rq_new", Query: "b c", Terms: "b c", CreatedAt: "2026-02-01T10:00:00.000Z"},
		{RequestID: "rq_new", Terms: "other", CreatedAt: "2026-02-02T10:00:00.000Z"}, // the first record wins
	} {
		if err := s.RecordRequestTerms(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if r, err := s.RequestTermsOf(ctx, "rq_new"); err != nil || r.Terms != "b c" || r.Query != "b c" {
		t.Errorf("rq_new = %+v, %v", r, err)
	}
	if _, err := s.PruneTelemetry(ctx, "2026-01-15T00:00:00.000Z", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RequestTermsOf(ctx, "rq_old"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("rq_old after pruning: %v, want ErrNotFound", err)
	}
	if _, err := s.RequestTermsOf(ctx, "rq_new"); err != nil {
		t.Errorf("rq_new after pruning: %v", err)
	}
}
