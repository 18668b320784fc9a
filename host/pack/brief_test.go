package pack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/internal/jobtest"
	"github.com/palacehq/palace/host/pack"
)

func signal(b pack.Brief, code string) (pack.BriefSignal, bool) {
	for _, s := range b.Uncertainty {
		if s.Code == code {
			return s, true
		}
	}
	return pack.BriefSignal{}, false
}

func action(b pack.Brief, name, commandHas string) bool {
	return slices.ContainsFunc(b.NextActions, func(a pack.BriefAction) bool {
		return a.Action == name && strings.Contains(a.Command, commandHas)
	})
}

func TestBrief(t *testing.T) {
	ctx := context.Background()
	fx := newFixture(t, jobtest.Options{Git: true})
	wal := scoped("Open SQLite in WAL mode before a bulk import", domain.TierShu)
	wal.content = "Run `go test ./store/...` after changing store/store.go; see https://sqlite.org/wal.html. TODO: measure the checkpoint cost."
	card := fx.card(t, wal)
	counter := fx.record(t, ev{content: "WAL did not help the import on NFS: it contradicts the card", field: "storage", source: "ci://nfs/12"})
	fx.link(t, card, domain.RoleCounterexample, counter)
	loose := fx.record(t, ev{content: "bulk import blocked on a checkpoint; remaining: retry with a larger busy_timeout", field: "storage", source: "log:import-7"})
	sup := fx.record(t, ev{content: "import batches of 500 rows keep the WAL small", field: "storage", source: "bench:import"})
	cand := fx.Seed(t, jobtest.Card{Statement: "Import in batches of 500 rows", Tier: domain.TierQi, Field: "storage", Supporting: []string{sup}})
	for i := range 5 {
		fx.record(t, ev{content: fmt.Sprint("the flaky lint step timed out ", i), field: "ci"})
	}

	req := pack.BriefRequest{Query: "WAL import", File: "store/store.go", Field: "storage", Intents: []string{"debug", "storage"}}
	b, err := fx.pl.Brief(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("same selection as context", func(t *testing.T) {
		p, err := fx.pl.Context(ctx, pack.ContextRequest{Query: req.Query, File: req.File, Field: req.Field, Intents: req.Intents, DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range b.Cards {
			got = append(got, c.ID)
		}
		if !slices.Equal(got, itemIDs(p)) {
			t.Errorf("brief cards %v, context items %v", got, itemIDs(p))
		}
	})
	t.Run("key facts and cited evidence", func(t *testing.T) {
		// The counterexample contests the card: it is briefed with the
		// warning, never as a key fact.
		if len(b.KeyFacts) != 0 {
			t.Fatalf("key facts = %+v, want none (the one card is contested)", b.KeyFacts)
		}
		if i := slices.IndexFunc(b.Cards, func(c pack.BriefCard) bool { return c.ID == card }); i < 0 || b.Cards[i].Contest == nil ||
			len(b.Cards[i].Contest.Citations) != 1 || b.Cards[i].Contest.Citations[0].EvidenceID != counter {
			t.Fatalf("cards = %+v, want %s contested by %s", b.Cards, card, counter)
		}
		byID := map[string]pack.BriefEvidence{}
		for _, ev := range b.Evidence {
			byID[ev.ID] = ev
		}
		if ev := byID[counter]; !slices.Contains(ev.Roles, "counterexample") || !slices.Contains(ev.CitedBy, card) {
			t.Errorf("counterexample evidence = %+v", ev)
		}
		if ev := byID[loose]; !ev.Matched || len(ev.CitedBy) != 0 {
			t.Errorf("uncited matching evidence = %+v", ev)
		}
		if !strings.Contains(b.Summary, "0 authoritative cards") || !strings.Contains(b.Summary, "1 card is contested") || strings.Contains(b.Summary, "First fact") {
			t.Errorf("summary = %q", b.Summary)
		}
	})
	t.Run("entities", func(t *testing.T) {
		want := map[string]string{"command": "go test ./store/...", "path": "store/store.go", "url": "https://sqlite.org/wal.html", "identifier": "busy_timeout"}
		for kind, text := range want {
			if !slices.ContainsFunc(b.Entities, func(x pack.BriefEntity) bool { return x.Kind == kind && x.Text == text }) {
				t.Errorf("no %s %q in %+v", kind, text, b.Entities)
			}
		}
	})
	t.Run("unresolved", func(t *testing.T) {
		var cues []string
		for _, c := range b.Unresolved {
			cues = append(cues, c.Cue+"@"+c.Source)
		}
		for _, w := range []string{"todo@" + card, "blocked@" + loose} {
			if !slices.Contains(cues, w) {
				t.Errorf("unresolved %v lacks %s", cues, w)
			}
		}
	})
	t.Run("uncertainty", func(t *testing.T) {
		if s, ok := signal(b, "counterexample"); !ok || !slices.Equal(s.IDs, []string{card}) {
			t.Errorf("counterexample signal = %+v", s)
		}
		if s, ok := signal(b, "contested"); !ok || !slices.Equal(s.IDs, []string{card}) || !strings.Contains(s.Message, "ci://nfs/12") {
			t.Errorf("contested signal = %+v", s)
		}
		if s, ok := signal(b, "evidence_without_cards"); !ok || !slices.Contains(s.IDs, loose) {
			t.Errorf("evidence_without_cards = %+v", s)
		}
		if _, ok := signal(b, "conflicting_evidence"); !ok {
			t.Errorf("no conflicting_evidence signal in %+v", b.Uncertainty)
		}
		if _, ok := signal(b, "no_authoritative_card"); ok {
			t.Error("no_authoritative_card raised although a card applies")
		}
	})
	t.Run("next actions", func(t *testing.T) {
		for _, w := range []struct{ action, has string }{
			{"link", "palace card link " + cand.ID + " --role verification"},
			{"distill", "--field ci"},
			{"distill", loose},
			{"review", "palace card show " + card},
		} {
			if !action(b, w.action, w.has) {
				t.Errorf("next actions lack %s %q: %+v", w.action, w.has, b.NextActions)
			}
		}
	})
	t.Run("writes nothing", func(t *testing.T) {
		if n, _ := fx.Store.CountInjectionRequests(ctx, ""); n != 0 {
			t.Errorf("brief wrote %d injection events", n)
		}
	})
	t.Run("deterministic", func(t *testing.T) {
		again, err := fx.pl.Brief(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		x, _ := json.Marshal(b)
		y, _ := json.Marshal(again)
		if string(x) != string(y) {
			t.Errorf("two briefs differ:\n%s\n%s", x, y)
		}
	})
}

func TestBriefWithoutAuthority(t *testing.T) {
	ctx := context.Background()
	fx := newFixture(t, jobtest.Options{Git: true})
	b, err := fx.pl.Brief(ctx, pack.BriefRequest{Query: "anything"})
	if err != nil {
		t.Fatal(err)
	}
	s, ok := signal(b, "no_authoritative_card")
	if !ok || !strings.Contains(s.Message, "Nothing is recorded") {
		t.Errorf("signal = %+v", b.Uncertainty)
	}
	if !action(b, "record", "palace record --field general") || len(b.KeyFacts) != 0 {
		t.Errorf("empty palace brief = %+v", b)
	}
}
