package store_test

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/store"
)

// TestLinkRowsAndSourceRefs checks the lean link read (link order: time,
// then insertion) and that source refs come back the same from the cache,
// with absent evidence never cached.
func TestLinkRowsAndSourceRefs(t *testing.T) {
	s, _ := open(t)
	contextSeed(t, s)
	ctx := context.Background()
	err := s.Tx(ctx, func(tx *store.Tx) error {
		for _, l := range []domain.Link{
			{CardID: "kc_2", EvidenceID: "ev_3", Role: "verification", CreatedAt: "2026-01-03T00:00:00.000Z"},
			{CardID: "kc_2", EvidenceID: "ev_1", Role: "counterexample", CreatedAt: "2026-01-02T00:00:00.000Z"},
			{CardID: "kc_2", EvidenceID: "ev_2", Role: "supporting", CreatedAt: "2026-01-02T00:00:00.000Z"},
			{CardID: "kc_1", EvidenceID: "ev_4", Role: "teaching", Note: "n", CreatedAt: "2025-12-31T00:00:00.000Z"},
		} {
			if _, err := tx.InsertLink(ctx, l); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	links, err := s.LinkRows(ctx, []string{"kc_2", "kc_1", "kc_6"})
	if err != nil {
		t.Fatal(err)
	}
	type lr struct{ card, ev, role string }
	var got []lr
	for _, id := range []string{"kc_1", "kc_2", "kc_6"} {
		for _, l := range links[id] {
			if l.Note != "" || l.CreatedAt != "" || l.SourceRef != "" {
				t.Errorf("LinkRows filled more than card, evidence and role: %+v", l)
			}
			got = append(got, lr{l.CardID, l.EvidenceID, string(l.Role)})
		}
	}
	want := []lr{{"kc_1", "ev_4", "teaching"}, {"kc_1", "ev_0", "supporting"},
		{"kc_2", "ev_1", "counterexample"}, {"kc_2", "ev_2", "supporting"}, {"kc_2", "ev_3", "verification"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("links = %v\nwant    %v", got, want)
	}
	if _, ok := links["kc_6"]; ok {
		t.Errorf("a card without links has an entry: %v", links["kc_6"])
	}
	for range 2 { // the second read is served from the cache
		refs, err := s.SourceRefs(ctx, []string{"ev_1", "ev_nope", "ev_1", "ev_2"})
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]string{"ev_1": "", "ev_2": ""}; !reflect.DeepEqual(refs, want) {
			t.Errorf("refs = %v, want %v", refs, want)
		}
	}
}

func TestInjectionSummaries(t *testing.T) {
	s, _ := open(t)
	contextSeed(t, s)
	ctx := context.Background()
	ev := func(card, outcome, at string) store.InjectionEvent {
		return store.InjectionEvent{RequestID: "rq", CardID: card, Outcome: outcome, CreatedAt: at}
	}
	rows := []store.InjectionEvent{
		ev("kc_1", "inline_full", "2025-12-01T10:00:00.000Z"), // applied before the window: latest only
		ev("kc_1", "trimmed", "2026-01-05T10:00:00.000Z"),
		ev("kc_1", "trimmed", "2026-01-06T10:00:00.000Z"),
		ev("kc_1", "inline_compact", "2026-01-06T11:00:00.000Z"),
		ev("kc_1", "ref_only", "2026-01-06T12:00:00.000Z"),      // in no group
		ev("kc_2", "skipped_scope", "2026-01-06T12:00:00.000Z"), // counted per request only
		ev("kc_6", "viewed", "2026-01-07T12:00:00.000Z"),
	}
	record(t, s, rows...)
	groups := [][]string{{"inline_full", "inline_compact"}, {"trimmed"}, {"viewed"}}
	got, err := s.InjectionSummaries(ctx, []string{"kc_1", "kc_2", "kc_6", "kc_5"}, "2026-01-05T23:00:00.000Z", groups, []string{"inline_full", "inline_compact"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]store.InjectionSummary{
		"kc_1": {Counts: []int{1, 2, 0}, Latest: "2026-01-06T11:00:00.000Z"}, // the window counts whole UTC days from the 5th
		"kc_6": {Counts: []int{0, 0, 1}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("summaries = %+v\nwant        %+v", got, want)
	}
}

func TestEvidenceTexts(t *testing.T) {
	s, _ := open(t)
	contextSeed(t, s)
	got, err := s.EvidenceTexts(context.Background(), []string{"ev_1", "ev_6", "ev_nope"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]domain.Evidence{
		"ev_1": {ID: "ev_1", Content: "lock contention seen 1", Field: "locks", Provenance: "runtime", AnchorID: "an_a"},
		"ev_6": {ID: "ev_6", Content: "lock contention seen 6", Field: "locks", Provenance: "runtime", AnchorID: "an_b"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("evidence = %+v\nwant       %+v", got, want)
	}
}

// TestCardsOf reads back whole the cards CandidateTexts found.
func TestCardsOf(t *testing.T) {
	s, _ := open(t)
	contextSeed(t, s)
	ctx := context.Background()
	texts, err := s.CandidateTexts(ctx, store.CandidateQuery{AnchorIDs: []string{"an_a"}, Statuses: []domain.Status{"promoted", "canonical"}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.CardsOf(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	want, err := s.CardsByIDs(ctx, []string{"kc_1", "kc_2", "kc_7"})
	if err != nil || len(texts) != 3 || !reflect.DeepEqual(got, want) {
		t.Errorf("of texts %v (%v)\nby id    %v", got, err, want)
	}
}

// TestCandidateTextsSeeEdits reads texts twice (the second time from the
// cache), then changes a statement behind the store's back, as another
// program could: the next read has the new text.
func TestCandidateTextsSeeEdits(t *testing.T) {
	s, _ := open(t)
	contextSeed(t, s)
	ctx := context.Background()
	q := store.CandidateQuery{AnchorIDs: []string{"an_a"}, Statuses: []domain.Status{"promoted"}}
	statement := func() string {
		t.Helper()
		texts, err := s.CandidateTexts(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range texts {
			if x.ID == "kc_1" {
				return x.Statement
			}
		}
		t.Fatalf("kc_1 is not among %v", texts)
		return ""
	}
	for range 2 {
		if got := statement(); got != "sqlite WAL mode for readers" {
			t.Fatalf("statement = %q", got)
		}
	}
	if err := s.Tx(ctx, func(tx *store.Tx) error {
		return tx.ExecForTest(ctx, `UPDATE cards SET statement = 'edited elsewhere' WHERE id = 'kc_1'`)
	}); err != nil {
		t.Fatal(err)
	}
	if got := statement(); got != "edited elsewhere" {
		t.Errorf("after an edit the statement is %q, want the edited one", got)
	}
}

// TestCandidateCardsSeeChanges reads cards twice (the second time from the
// cache), then changes one behind the store's back, as another program
// could, and through a second handle, as another palace process does: each
// next read has the change, by the candidate read and by CardsOf.
func TestCandidateCardsSeeChanges(t *testing.T) {
	s, path := open(t)
	contextSeed(t, s)
	ctx := context.Background()
	q := store.CandidateQuery{AnchorIDs: []string{"an_a"}, Statuses: []domain.Status{"promoted", "canonical"}}
	texts, err := s.CandidateTexts(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	field := func() (string, string) {
		t.Helper()
		cards, err := s.CandidateCards(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		byRow, err := s.CardsOf(ctx, texts)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cards {
			if c.ID == "kc_1" {
				return c.Field, byRow["kc_1"].Field
			}
		}
		t.Fatalf("kc_1 is not among %v", cards)
		return "", ""
	}
	first, _ := field()
	for range 2 {
		if a, b := field(); a != first || b != first {
			t.Fatalf("field = %q / %q, want %q", a, b, first)
		}
	}
	if err := s.Tx(ctx, func(tx *store.Tx) error {
		return tx.ExecForTest(ctx, `UPDATE cards SET field = 'edited-elsewhere' WHERE id = 'kc_1'`)
	}); err != nil {
		t.Fatal(err)
	}
	if a, b := field(); a != "edited-elsewhere" || b != "edited-elsewhere" {
		t.Errorf("after an edit the field is %q / %q, want the edited one", a, b)
	}
	other, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.Tx(ctx, func(tx *store.Tx) error {
		return tx.ExecForTest(ctx, `UPDATE cards SET field = 'from-another-process' WHERE id = 'kc_1'`)
	}); err != nil {
		t.Fatal(err)
	}
	if a, b := field(); a != "from-another-process" || b != "from-another-process" {
		t.Errorf("after another handle's edit the field is %q / %q", a, b)
	}
}

// TestLinkRowsSeeChanges reads links twice (the second time from the
// cache), then adds, changes and deletes links behind the store's back:
// each next read has the change.
func TestLinkRowsSeeChanges(t *testing.T) {
	s, _ := open(t)
	contextSeed(t, s)
	ctx := context.Background()
	ids := []string{"kc_1", "kc_2", "kc_nope"}
	read := func() map[string][]domain.Link {
		t.Helper()
		got, err := s.LinkRows(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	before := read()
	if again := read(); !reflect.DeepEqual(before, again) || len(before["kc_1"]) == 0 {
		t.Fatalf("links %v, then %v", before, again)
	}
	if _, ok := before["kc_nope"]; ok {
		t.Errorf("links of an unknown card: %v", before["kc_nope"])
	}
	exec := func(q string) {
		t.Helper()
		if err := s.Tx(ctx, func(tx *store.Tx) error { return tx.ExecForTest(ctx, q) }); err != nil {
			t.Fatal(err)
		}
	}
	n := len(before["kc_2"])
	exec(`INSERT INTO card_links(card_id, evidence_id, role, created_at) VALUES ('kc_2', 'ev_6', 'teaching', '2099-01-01T00:00:00.000Z')`)
	if got := read()["kc_2"]; len(got) != n+1 || got[n].EvidenceID != "ev_6" || got[n].Role != "teaching" {
		t.Errorf("after an insert, links of kc_2 = %v", got)
	}
	exec(`UPDATE card_links SET role = 'verification' WHERE card_id = 'kc_2' AND evidence_id = 'ev_6'`)
	if got := read()["kc_2"]; len(got) != n+1 || got[n].Role != "verification" {
		t.Errorf("after an update, links of kc_2 = %v", got)
	}
	exec(`DELETE FROM card_links WHERE card_id = 'kc_2' AND evidence_id = 'ev_6'`)
	if got := read()["kc_2"]; !reflect.DeepEqual(got, before["kc_2"]) {
		t.Errorf("after a delete, links of kc_2 = %v, want %v", got, before["kc_2"])
	}
}

// TestLinksForSeeChanges: the full links LinksFor serves from its cache
// equal a fresh read after every kind of change they depend on, including
// a duplicate recorded for evidence a link already cites.
func TestLinksForSeeChanges(t *testing.T) {
	s, _ := open(t)
	contextSeed(t, s)
	ctx := context.Background()
	ids := []string{"kc_1", "kc_2", "kc_nope"}
	check := func(when string) map[string][]domain.Link {
		t.Helper()
		got, err := s.LinksFor(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string][]domain.Link{}
		if err := s.Tx(ctx, func(tx *store.Tx) error {
			for _, id := range ids {
				ls, err := tx.Links(ctx, id)
				if len(ls) > 0 {
					want[id] = ls
				}
				if err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: LinksFor = %v, a fresh read %v", when, got, want)
		}
		return got
	}
	before := check("first read")
	if len(before["kc_1"]) == 0 {
		t.Fatalf("kc_1 has no links: %v", before)
	}
	check("second read")
	exec := func(q string) {
		t.Helper()
		if err := s.Tx(ctx, func(tx *store.Tx) error { return tx.ExecForTest(ctx, q) }); err != nil {
			t.Fatal(err)
		}
	}
	exec(`INSERT INTO card_links(card_id, evidence_id, role, created_at) VALUES ('kc_2', 'ev_6', 'teaching', '2099-01-01T00:00:00.000Z')`)
	check("after an insert")
	exec(`UPDATE card_links SET note = 'seen twice' WHERE card_id = 'kc_2' AND evidence_id = 'ev_6'`)
	check("after an update")
	first := before["kc_1"][0].EvidenceID
	other := "ev_6"
	if first == other {
		other = "ev_5"
	}
	exec(`INSERT INTO evidence_duplicates(evidence_id, original_id, cause, created_at) VALUES ('` + first + `', '` + other + `', 'allow_duplicate', '2099-01-01T00:00:00.000Z')`)
	if got := check("after a duplicate"); got["kc_1"][0].Original != other {
		t.Errorf("after a duplicate, the original of %s is %q, want %q", first, got["kc_1"][0].Original, other)
	}
	exec(`DELETE FROM card_links WHERE card_id = 'kc_2' AND evidence_id = 'ev_6'`)
	check("after a delete")
}

// TestCandidateSelectionSeesChanges: the selection a store keeps between
// requests answers as SQL does (CandidateFill filters in its statement)
// after every kind of change — a status moved, an expiry set, a new card,
// a text edited — and at every request time (expiry is applied at read).
func TestCandidateSelectionSeesChanges(t *testing.T) {
	s, _ := open(t)
	contextSeed(t, s)
	ctx := context.Background()
	q := store.CandidateQuery{AnchorIDs: []string{"an_a", "an_g"}, Statuses: []domain.Status{"promoted", "canonical"}, Limit: 100,
		TierOrder: domain.Tiers, AnchorOrder: []string{"an_a", "an_g"}, PersistenceOrder: []domain.Persistence{"foundational", "protected", "standard"}}
	check := func(when string) {
		t.Helper()
		// kc_7 expires at the third time: SQL keeps it only before.
		for _, at := range []string{"", "2025-06-01T00:00:00.000Z", "2026-01-01T00:00:00.000Z", now, "2027-01-01T00:00:00.000Z"} {
			q := q
			q.Now = at
			n, err := s.CountCandidates(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			texts, err := s.CandidateTexts(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			cards, err := s.CandidateCards(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			fill, total, err := s.CandidateFill(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			var tids, cids, want []string
			for _, x := range texts {
				tids = append(tids, x.ID+":"+string(x.Tier)+":"+x.Statement)
			}
			for _, c := range cards {
				cids = append(cids, c.ID+":"+string(c.Tier)+":"+c.Statement)
			}
			for _, c := range fill {
				want = append(want, c.ID+":"+string(c.Tier)+":"+c.Statement)
			}
			slices.Sort(tids)
			slices.Sort(cids)
			slices.Sort(want)
			if n != total || !slices.Equal(tids, want) || !slices.Equal(cids, want) {
				t.Errorf("%s, at %q: count %d, texts %v, cards %v; SQL: %d %v", when, at, n, tids, cids, total, want)
			}
		}
	}
	check("first read")
	check("second read")
	exec := func(q string) {
		t.Helper()
		if err := s.Tx(ctx, func(tx *store.Tx) error { return tx.ExecForTest(ctx, q) }); err != nil {
			t.Fatal(err)
		}
	}
	exec(`UPDATE cards SET status = 'retired' WHERE id = 'kc_1'`)
	check("after a status change")
	exec(`UPDATE cards SET expires_at = '2026-06-01T00:00:00.000Z' WHERE id = 'kc_2'`)
	check("after an expiry")
	if err := s.Tx(ctx, func(tx *store.Tx) error {
		return tx.InsertCard(ctx, domain.Card{ID: "kc_8", Statement: "a new rule", StatementNorm: "a new rule", Tier: "shu",
			Status: "promoted", Domain: "project", Field: "storage", AnchorID: "an_a", Persistence: "standard",
			RenderPref: "auto", CreatedBy: "a", CreatedAt: now, UpdatedAt: now})
	}); err != nil {
		t.Fatal(err)
	}
	check("after a new card")
	exec(`UPDATE cards SET statement = 'rewritten elsewhere' WHERE id = 'kc_6'`)
	check("after a text edit")
}

// TestEvidenceReadsSeeChanges: the evidence rows a store keeps between
// reads follow a redaction (by this handle or another) and new rows.
func TestEvidenceReadsSeeChanges(t *testing.T) {
	s, path := open(t)
	contextSeed(t, s)
	ctx := context.Background()
	read := func() (map[string]string, map[string]string) {
		t.Helper()
		recent, err := s.RecentEvidence(ctx, []string{"an_a", "an_b"}, "", 10)
		if err != nil {
			t.Fatal(err)
		}
		r := map[string]string{}
		var ids []string
		for i, e := range recent {
			r[e.ID] = e.Content
			ids = append(ids, e.ID)
			if i > 0 && recent[i-1].ID < e.ID { // ev_N were recorded in order
				t.Errorf("recent evidence out of order: %s before %s", recent[i-1].ID, e.ID)
			}
		}
		texts, err := s.EvidenceTexts(ctx, append(ids, "ev_nope"))
		if err != nil {
			t.Fatal(err)
		}
		x := map[string]string{}
		for id, e := range texts {
			x[id] = e.Content
		}
		return r, x
	}
	r, x := read()
	if len(r) != 7 || !reflect.DeepEqual(r, x) || r["ev_3"] != "lock contention seen 3" {
		t.Fatalf("recent %v, texts %v", r, x)
	}
	redact := func(st *store.Store, id, notice string) {
		t.Helper()
		if err := st.Tx(ctx, func(tx *store.Tx) error {
			return tx.RedactEvidence(ctx, store.Redaction{EvidenceID: id, Notice: notice, Reason: "test", Actor: "a", ActorType: "human", CreatedAt: now})
		}); err != nil {
			t.Fatal(err)
		}
	}
	redact(s, "ev_3", "[redacted here]")
	if r, x := read(); r["ev_3"] != "[redacted here]" || x["ev_3"] != "[redacted here]" {
		t.Errorf("after a redaction: recent %q, texts %q", r["ev_3"], x["ev_3"])
	}
	other, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	redact(other, "ev_1", "[redacted elsewhere]")
	if r, x := read(); r["ev_1"] != "[redacted elsewhere]" || x["ev_1"] != "[redacted elsewhere]" || r["ev_3"] != "[redacted here]" {
		t.Errorf("after another handle's redaction: recent %v, texts %v", r, x)
	}
	if err := s.Tx(ctx, func(tx *store.Tx) error {
		return tx.InsertEvidence(ctx, domain.Evidence{ID: "ev_9", Content: "newest", Domain: "project", Field: "locks", Provenance: "runtime",
			AnchorID: "an_a", ContentSHA256: "y", Actor: "a", ActorType: "agent", CreatedAt: now})
	}); err != nil {
		t.Fatal(err)
	}
	if r, _ := read(); r["ev_9"] != "newest" || len(r) != 8 {
		t.Errorf("after a new row: %v", r)
	}
}

// TestPinReadsOneVersion: reads with a pinned context share the data
// version the first of them read, so a change committed after it is not
// seen through the caches until the next request pins again; a context
// that is not pinned sees it at once.
func TestPinReadsOneVersion(t *testing.T) {
	s, _ := open(t)
	contextSeed(t, s)
	ctx := context.Background()
	q := store.CandidateQuery{AnchorIDs: []string{"an_a"}, Statuses: []domain.Status{"promoted", "canonical"}}
	field := func(ctx context.Context) string {
		t.Helper()
		cards, err := s.CandidateCards(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cards {
			if c.ID == "kc_1" {
				return c.Field
			}
		}
		t.Fatalf("kc_1 is not among %v", cards)
		return ""
	}
	pinned := s.Pin(ctx)
	if s.Pin(pinned) != pinned {
		t.Error("pinning a pinned context made a new one")
	}
	first := field(pinned)
	if err := s.Tx(ctx, func(tx *store.Tx) error {
		return tx.ExecForTest(ctx, `UPDATE cards SET field = 'edited' WHERE id = 'kc_1'`)
	}); err != nil {
		t.Fatal(err)
	}
	if got := field(pinned); got != first {
		t.Errorf("a pinned read saw a change committed after its version: %q, want %q", got, first)
	}
	if got := field(ctx); got != "edited" {
		t.Errorf("an unpinned read after the change has %q, want the edited field", got)
	}
	if got := field(s.Pin(ctx)); got != "edited" {
		t.Errorf("a newly pinned read after the change has %q, want the edited field", got)
	}
}
