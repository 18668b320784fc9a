package authority_test

import (
	"context"
	"strings"
	"testing"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/authority"
	"github.com/palacehq/palace/host/internal/jobtest"
	"github.com/palacehq/palace/policies"
	"github.com/palacehq/palace/store"
)

// links are the links a card file cites, as the palace holds them.
func links(t *testing.T, f *jobtest.Fixture, id string) []domain.Link {
	t.Helper()
	ls, err := f.Store.Links(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return ls
}

func writeImports(t *testing.T, f *jobtest.Fixture, ims ...authority.Import) []domain.Event {
	t.Helper()
	ctx := context.Background()
	var evs []domain.Event
	err := f.Store.Tx(ctx, func(tx *store.Tx) error {
		var err error
		evs, err = f.Door().WriteImports(ctx, tx, ims)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

var reviewed = policies.GateSource{Channel: policies.SourceCardFile, Path: ".palace/cards/x.md", Commit: "abc123", Upstream: "origin/main", Reviewed: true}

// A card file's claim to authority is the gate's decision on the evidence
// it cites, from where it comes: an unreviewed commit's claim makes a new
// card a candidate, held with the gate's reasons; a reviewed one with
// enough evidence is taken, decided by the gate.
func TestImportOfANewCardIsTheGatesDecision(t *testing.T) {
	ctx := context.Background()
	f := jobtest.New(t, jobtest.Options{Git: true})
	d := f.Door()
	sup := f.Evidence(t, domain.AnchorRepo, "main was force-pushed").ID
	ver := f.Evidence(t, domain.AnchorRepo, "branch protection blocked a push").ID
	claim := func(statement string, src policies.GateSource) authority.FileClaim {
		c := newCard(f, statement, domain.TierShu, domain.StatusPromoted, domain.AnchorRepo)
		now := store.FormatTime(f.Now())
		return authority.FileClaim{Card: *c, Source: src, Reviewer: policies.Reviewer{Name: "ana", Type: "human"}, Reason: "imported from " + src.Path,
			Links: []domain.Link{{CardID: c.ID, EvidenceID: sup, Role: domain.RoleSupporting, CreatedAt: now}, {CardID: c.ID, EvidenceID: ver, Role: domain.RoleVerification, CreatedAt: now}}}
	}
	unreviewed := reviewed
	unreviewed.Reviewed = false
	held := d.DecideImport(ctx, claim("Never push to main", unreviewed))
	if !held.Writes() || held.Status() != domain.StatusCandidate || len(held.Held()) == 0 || !strings.Contains(held.Held()[0], "not on the upstream default branch") || held.Gate() == nil {
		t.Errorf("unreviewed claim: writes %v, %s, held %q", held.Writes(), held.Status(), held.Held())
	}
	taken := d.DecideImport(ctx, claim("Sign every commit", reviewed))
	if !taken.Writes() || taken.Status() != domain.StatusPromoted || taken.Held() != nil {
		t.Errorf("reviewed claim: writes %v, %s, held %q", taken.Writes(), taken.Status(), taken.Held())
	}
	evs := writeImports(t, f, held, taken)
	if evs[0].Type != domain.EventImported || evs[0].ToStatus != domain.StatusCandidate || evs[0].DecidedBy != domain.DecidedByRule || !strings.Contains(string(evs[0].Data), "held") {
		t.Errorf("held import's event: %+v", evs[0])
	}
	if evs[1].DecidedBy != domain.DecidedByGate || evs[1].ToStatus != domain.StatusPromoted || evs[1].PolicyHash == "" {
		t.Errorf("taken import's event: %+v", evs[1])
	}
	if got := card(t, f, evs[1].CardID); got.Status != domain.StatusPromoted || len(links(t, f, got.ID)) != 2 {
		t.Errorf("imported card: %s with %d links", got.Status, len(links(t, f, got.ID)))
	}
}

// For a card the palace holds: new citations are links a rule takes (a
// counterexample contests an authoritative card); a file cannot make an
// authoritative card a candidate again; changed governed fields of an
// authoritative card need the gate.
func TestImportOfAHeldCard(t *testing.T) {
	ctx := context.Background()
	f := jobtest.New(t, jobtest.Options{Git: true})
	d := f.Door()
	c := seed(t, f, jobtest.Card{Statement: "Never push to main", Tier: domain.TierShu, Status: domain.StatusPromoted, Anchor: domain.AnchorRepo})
	have := links(t, f, c.ID)
	ce := f.Evidence(t, domain.AnchorRepo, "a hotfix went to main").ID
	ceLink := domain.Link{CardID: c.ID, EvidenceID: ce, Role: domain.RoleCounterexample, CreatedAt: store.FormatTime(f.Now())}
	base := authority.FileClaim{Card: c, Current: &c, Have: have, Source: reviewed, Reviewer: policies.Reviewer{Name: "ana", Type: "human"}, Reason: "from the file"}

	same := base
	same.Links = have
	if im := d.DecideImport(ctx, same); im.Writes() || im.Status() != domain.StatusPromoted {
		t.Errorf("the same card: writes %v, %s", im.Writes(), im.Status())
	}

	cited := base
	cited.Links = append(append([]domain.Link{}, have...), ceLink)
	im := d.DecideImport(ctx, cited)
	if !im.Writes() || im.Status() != domain.StatusPromoted || im.Gate() != nil {
		t.Fatalf("a new citation: writes %v, %s, gate %v; want a rule's link", im.Writes(), im.Status(), im.Gate())
	}
	writeImports(t, f, im)
	if cs := contests(t, f, c.ID); len(cs) != 1 || cs[0].EvidenceID != ce {
		t.Errorf("an imported counterexample did not contest the card: %+v", cs)
	}

	back := base
	back.Card.Status = domain.StatusCandidate
	if im := d.DecideImport(ctx, back); im.Writes() || im.Status() != domain.StatusPromoted || !strings.Contains(strings.Join(im.Held(), ""), "cannot make promoted card "+c.ID+" a candidate again") {
		t.Errorf("back to candidate: writes %v, %s, held %q", im.Writes(), im.Status(), im.Held())
	}

	// A contested card's changed statement is held by the gate's floor.
	edited := base
	edited.Card.Statement = "Never push to main or release"
	edited.Contests = contests(t, f, c.ID)
	if im := d.DecideImport(ctx, edited); im.Writes() || im.Status() != domain.StatusPromoted || im.Gate() == nil || im.Gate().Allow {
		t.Errorf("edit of a contested card: writes %v, %s, held %q", im.Writes(), im.Status(), im.Held())
	}

	// Retiring through a file is the gate's retire decision: held while
	// the card is contested, taken on a card that is not.
	retire := base
	retire.Card.Status = domain.StatusRetired
	retire.Contests = contests(t, f, c.ID)
	if im := d.DecideImport(ctx, retire); im.Writes() || im.Gate() == nil || !strings.Contains(strings.Join(im.Held(), ""), "is contested") {
		t.Errorf("retire of a contested card by file: writes %v, held %q", im.Writes(), im.Held())
	}
	c2 := seed(t, f, jobtest.Card{Statement: "Sign every commit", Tier: domain.TierShu, Status: domain.StatusPromoted, Anchor: domain.AnchorRepo})
	retire2 := authority.FileClaim{Card: c2, Current: &c2, Have: links(t, f, c2.ID), Links: links(t, f, c2.ID), Source: reviewed, Reviewer: policies.Reviewer{Name: "ana", Type: "human"}}
	retire2.Card.Status = domain.StatusRetired
	im = d.DecideImport(ctx, retire2)
	if !im.Writes() || im.Status() != domain.StatusRetired || im.Gate() == nil || !im.Gate().Allow {
		t.Fatalf("retire by file: writes %v, %s, held %q", im.Writes(), im.Status(), im.Held())
	}
	if ev := writeImports(t, f, im)[0]; ev.DecidedBy != domain.DecidedByGate || card(t, f, c2.ID).Status != domain.StatusRetired {
		t.Errorf("retire by file: event %+v, card %s", ev, card(t, f, c2.ID).Status)
	}
}

// A candidate's text is taken by rule; its claim to authority without
// evidence is held and its status stays.
func TestImportKeepsACandidatesTextWithoutItsClaim(t *testing.T) {
	ctx := context.Background()
	f := jobtest.New(t, jobtest.Options{Git: true})
	c := seed(t, f, jobtest.Card{Statement: "Maybe squash merges", Tier: domain.TierShu, Anchor: domain.AnchorRepo})
	have := links(t, f, c.ID)
	cl := authority.FileClaim{Card: c, Current: &c, Have: have, Links: have, Source: reviewed, Reviewer: policies.Reviewer{Name: "ana", Type: "human"}, Reason: "from the file"}
	cl.Card.Content = "Squash when the branch has fixups."
	cl.Card.Status = domain.StatusPromoted
	im := f.Door().DecideImport(ctx, cl)
	if !im.Writes() || im.Status() != domain.StatusCandidate || len(im.Held()) == 0 {
		t.Fatalf("candidate claiming promoted without verification: writes %v, %s, held %q", im.Writes(), im.Status(), im.Held())
	}
	writeImports(t, f, im)
	if got := card(t, f, c.ID); got.Status != domain.StatusCandidate || got.Content != cl.Card.Content {
		t.Errorf("after import: %s %q", got.Status, got.Content)
	}
}

// CheckRefs returns the links refs make without writing them.
func TestCheckRefs(t *testing.T) {
	ctx := context.Background()
	f := jobtest.New(t, jobtest.Options{Git: true})
	ev := f.Evidence(t, domain.AnchorWorktree, "seen").ID
	err := f.Store.Tx(ctx, func(tx *store.Tx) error {
		ls, err := f.Door().CheckRefs(ctx, tx, "card_x", refs(domain.RoleVerification, ev))
		if err != nil {
			return err
		}
		if len(ls) != 1 || ls[0].CardID != "card_x" || ls[0].Role != domain.RoleVerification {
			t.Errorf("links: %+v", ls)
		}
		_, err = f.Door().CheckRefs(ctx, tx, "card_x", refs(domain.RoleVerification, "ev_missing"))
		if err == nil {
			t.Errorf("unknown evidence accepted")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
