package authority_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/authority"
	"github.com/palacehq/palace/host/internal/jobtest"
	"github.com/palacehq/palace/internal/hosterr"
	"github.com/palacehq/palace/store"
)

// In agent mode every change that is a person's decision is refused with
// KindMode and writes nothing; what is a rule's (a candidate, a link, a
// contest on evidence, an expiry) goes through.
func TestAgentModeIsRefusedAPersonsDecision(t *testing.T) {
	f := jobtest.New(t, jobtest.Options{Git: true, Agent: true})
	cand := seed(t, f, jobtest.Card{Statement: "Run go vet before a commit", Tier: domain.TierShu})
	d := f.Door()
	ev := f.Evidence(t, domain.AnchorWorktree, "go vet caught a bug").ID
	for _, ch := range []authority.Change{
		{Op: authority.OpDirect, Card: newCard(f, "Never push to main", domain.TierShu, domain.StatusPromoted, domain.AnchorRepo), Refs: refs(domain.RoleSupporting, ev)},
		{Op: authority.OpPromote, CardID: cand.ID, Refs: refs(domain.RoleVerification, ev)},
		{Op: authority.OpDemote, CardID: cand.ID, Refs: refs(domain.RoleCounterexample, ev)},
		{Op: authority.OpRetire, CardID: cand.ID},
		{Op: authority.OpResolve, CardID: cand.ID},
		{Op: authority.OpPublish, CardID: cand.ID, Target: "repo"},
		{Op: authority.OpGovern, CardID: cand.ID, From: "standard", To: "protected"},
	} {
		_, err := try(f, d, ch)
		wantKind(t, string(ch.Op), err, hosterr.KindMode, "is refused in agent mode")
	}
	if got := card(t, f, cand.ID); got.Status != domain.StatusCandidate {
		t.Errorf("candidate is %s after refusals", got.Status)
	}
	if n := len(events(t, f, cand.ID)); n != 1 {
		t.Errorf("%d events after refusals, want the creation alone", n)
	}
	if links, _ := f.Store.Links(context.Background(), cand.ID); len(links) != 1 {
		t.Errorf("links after refusals: %v", links)
	}
	// A rule's change goes through in agent mode.
	out := f.Apply(t, authority.Change{Op: authority.OpExpire, CardID: cand.ID, Reason: "older than 90 days"})
	if out.Event.DecidedBy != domain.DecidedByRule || card(t, f, cand.ID).Status != domain.StatusRetired {
		t.Errorf("expire in agent mode: %+v", out.Event)
	}
}

// A new card is a candidate decided by a rule; a direct write is an
// authoritative card decided by a person; the door refuses the rest.
func TestCreateAndDirectWrite(t *testing.T) {
	f := jobtest.New(t, jobtest.Options{Git: true})
	d := f.Door()
	ev := f.Evidence(t, domain.AnchorRepo, "main was force-pushed and history lost").ID

	out := f.Apply(t, authority.Change{Op: authority.OpCreate, Card: newCard(f, "Rebase before merging", domain.TierShu, domain.StatusCandidate, domain.AnchorRepo), Refs: refs(domain.RoleSupporting, ev)})
	if out.Event.Type != domain.EventCreated || out.Event.DecidedBy != domain.DecidedByRule || len(out.Added) != 1 {
		t.Errorf("create: %+v", out)
	}
	direct := f.Apply(t, authority.Change{Op: authority.OpDirect, Card: newCard(f, "Never push to main", domain.TierDaoRen, domain.StatusCanonical, domain.AnchorRepo), Refs: refs(domain.RoleSupporting, ev)})
	if direct.Event.Type != domain.EventDirectWrite || direct.Event.DecidedBy != domain.DecidedByHuman || direct.Event.Reason != "direct write by ana, gate bypassed" {
		t.Errorf("direct write: %+v", direct.Event)
	}
	for _, c := range []struct {
		ch   authority.Change
		want string
	}{
		{authority.Change{Op: authority.OpCreate, Card: newCard(f, "Squash merges", domain.TierShu, domain.StatusPromoted, domain.AnchorRepo)}, "a new card is a candidate"},
		{authority.Change{Op: authority.OpDirect, Card: newCard(f, "Squash merges", domain.TierShu, domain.StatusCandidate, domain.AnchorRepo)}, "--direct writes an authoritative card"},
		{authority.Change{Op: authority.OpCreate, Card: newCard(f, "never push to MAIN", domain.TierShu, domain.StatusCandidate, domain.AnchorRepo)}, "a canonical card with the same statement exists"},
		{authority.Change{Op: authority.OpCreate, Card: newCard(f, "Squash merges", domain.TierShu, domain.StatusCandidate, domain.AnchorRepo), Refs: refs(domain.RoleSupporting, "ev_nope")}, "no such evidence"},
		{authority.Change{Op: authority.OpCreate, Card: newCard(f, "Squash merges", domain.TierShu, domain.StatusCandidate, domain.AnchorRepo), Refs: refs(domain.RoleSupporting, direct.Card.ID)}, "is a card: links point at evidence only"},
		{authority.Change{Op: authority.OpCreate, Card: newCard(f, "Squash merges", domain.TierShu, domain.StatusCandidate, domain.AnchorRepo),
			Refs: []authority.Refs{{Role: domain.RoleSupporting, IDs: []string{ev}}, {Role: domain.RoleCounterexample, IDs: []string{ev}}}}, "a piece of evidence has one role per card"},
		{authority.Change{Op: authority.OpCreate, Card: newCard(f, "Squash merges", domain.TierShu, domain.StatusCandidate, domain.AnchorRepo), Supersedes: "card_nope"}, "card_nope"},
		{authority.Change{Op: "rename", CardID: direct.Card.ID}, `unknown op "rename"`},
	} {
		_, err := try(f, d, c.ch)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want a refusal naming %q", c.ch.Op, err, c.want)
		}
	}
	_, err := try(f, d, authority.Change{Op: authority.OpDirect, Card: newCard(f, "Use key AKIAIOSFODNN7EXAMPLE", domain.TierShu, domain.StatusPromoted, domain.AnchorRepo)})
	wantKind(t, "direct write of a secret", err, hosterr.KindDenied, "contains a secret")

	// Written authoritative over a counterexample, a card starts contested.
	over := f.Apply(t, authority.Change{Op: authority.OpDirect, Card: newCard(f, "Deploy on Fridays", domain.TierShu, domain.StatusPromoted, domain.AnchorRepo), Refs: refs(domain.RoleCounterexample, ev)})
	if cs := contests(t, f, over.Card.ID); len(cs) != 1 || cs[0].Kind != authority.ContestCounterexample || cs[0].EvidenceID != ev {
		t.Errorf("contests of a card written over a counterexample: %+v", cs)
	}
}

// The gate decides a promotion: a denial names what is missing, rolls the
// verification links back and writes nothing; an allowed one is the
// gate's decision, with the policy's hash on the event.
func TestPromoteIsTheGatesDecision(t *testing.T) {
	f := jobtest.New(t, jobtest.Options{Git: true})
	d := f.Door()
	c := seed(t, f, jobtest.Card{Statement: "Run go vet before a commit", Tier: domain.TierShu})
	out, err := try(f, d, authority.Change{Op: authority.OpPromote, CardID: c.ID})
	wantKind(t, "promote without verification", err, hosterr.KindDenied, "gate denied promoting "+c.ID+" to promoted")
	if out.Gate == nil || out.Gate.Allow || out.Gate.Missing["verification"] != 1 {
		t.Errorf("denial's gate: %+v", out.Gate)
	}
	if got := card(t, f, c.ID); got.Status != domain.StatusCandidate || len(events(t, f, c.ID)) != 1 {
		t.Errorf("a denial wrote: %s, %d events", got.Status, len(events(t, f, c.ID)))
	}
	_, err = try(f, d, authority.Change{Op: authority.OpPromote, CardID: c.ID, Target: "retired"})
	wantKind(t, "promote to retired", err, hosterr.KindInvalid, "is not a promotion target")

	ver := f.Evidence(t, domain.AnchorWorktree, "go vet flagged a printf bug in CI").ID
	out = f.Apply(t, authority.Change{Op: authority.OpPromote, CardID: c.ID, Refs: refs(domain.RoleVerification, ver), Reason: "verified in CI"})
	if out.Gate == nil || !out.Gate.Allow || out.Event.DecidedBy != domain.DecidedByGate || out.Event.ToStatus != domain.StatusPromoted || out.Event.PolicyHash == "" || len(out.Added) != 1 {
		t.Fatalf("promote: %+v", out)
	}
	if got := card(t, f, c.ID); got.Status != domain.StatusPromoted {
		t.Errorf("card is %s after promotion", got.Status)
	}
	_, err = try(f, d, authority.Change{Op: authority.OpPromote, CardID: c.ID, Target: "promoted"})
	wantKind(t, "promote a promoted card again", err, hosterr.KindInvalid, "cannot move to promoted")
}

// Demote needs counterexample evidence and is a person's decision; it
// closes the card's contests. Retire ends a card; a retired card is left.
func TestDemoteAndRetire(t *testing.T) {
	f := jobtest.New(t, jobtest.Options{Git: true})
	d := f.Door()
	c := seed(t, f, jobtest.Card{Statement: "Deploy on Fridays", Tier: domain.TierShu, Status: domain.StatusPromoted})
	_, err := try(f, d, authority.Change{Op: authority.OpDemote, CardID: c.ID})
	wantKind(t, "demote without a counterexample", err, hosterr.KindInvalid, "--counterexample evidence ref is required")
	_, err = try(f, d, authority.Change{Op: authority.OpDemote, CardID: c.ID, Target: "candidate"})
	wantKind(t, "demote to candidate", err, hosterr.KindInvalid, `--target "candidate" is not valid for demote`)

	ce := f.Evidence(t, domain.AnchorWorktree, "the Friday deploy broke production").ID
	f.Apply(t, authority.Change{Op: authority.OpLink, CardID: c.ID, Refs: refs(domain.RoleCounterexample, ce), Note: "it broke"})
	if len(contests(t, f, c.ID)) != 1 {
		t.Fatalf("a counterexample link did not contest the card")
	}
	out := f.Apply(t, authority.Change{Op: authority.OpDemote, CardID: c.ID, Refs: refs(domain.RoleCounterexample, ce), Reason: "it broke"})
	if out.Event.DecidedBy != domain.DecidedByHuman || out.Event.ToStatus != domain.StatusDemoted || len(out.Added) != 0 {
		t.Errorf("demote: %+v", out)
	}
	if len(contests(t, f, c.ID)) != 0 {
		t.Errorf("demotion left contests open")
	}
	if got := card(t, f, c.ID); got.Status != domain.StatusDemoted {
		t.Errorf("card is %s", got.Status)
	}
	_, err = try(f, d, authority.Change{Op: authority.OpExpire, CardID: c.ID})
	wantKind(t, "expire a demoted card", err, hosterr.KindInvalid, "only a candidate expires")
	out = f.Apply(t, authority.Change{Op: authority.OpRetire, CardID: c.ID, Reason: "we deploy daily now"})
	if out.Event.DecidedBy != domain.DecidedByHuman || out.Event.ToStatus != domain.StatusRetired {
		t.Errorf("retire: %+v", out.Event)
	}
	_, err = try(f, d, authority.Change{Op: authority.OpRetire, CardID: c.ID})
	wantKind(t, "retire twice", err, hosterr.KindInvalid, "is already retired")
	_, err = try(f, d, authority.Change{Op: authority.OpGovern, CardID: c.ID, From: "a", To: "b"})
	wantKind(t, "govern a retired card", err, hosterr.KindInvalid, "nothing left to govern")
	_, err = try(f, d, authority.Change{Op: authority.OpRetire, CardID: "card_nope"})
	if err == nil {
		t.Errorf("retire an unknown card: no error")
	}
}

// A contest needs a kind, a reason and evidence (but witness_superseded,
// whose source is a card); it opens once, and only on an authoritative
// card.
func TestContestNeedsEvidence(t *testing.T) {
	f := jobtest.New(t, jobtest.Options{Git: true})
	d := f.Door()
	law := seed(t, f, jobtest.Card{Statement: "Never push to main", Tier: domain.TierDaoRen, Status: domain.StatusCanonical})
	cand := seed(t, f, jobtest.Card{Statement: "Maybe squash merges", Tier: domain.TierShu})
	ev := f.Evidence(t, domain.AnchorWorktree, "a hotfix went to main directly").ID
	for _, c := range []struct {
		ct   authority.Contest
		want string
	}{
		{authority.Contest{Reason: "r", EvidenceID: ev}, "a contest needs a short kind"},
		{authority.Contest{Kind: authority.ContestContradiction, EvidenceID: ev}, "a contest needs a reason"},
		{authority.Contest{Kind: authority.ContestContradiction, Reason: "contradicted"}, "a contest needs evidence"},
		{authority.Contest{Kind: authority.ContestWitnessSuperseded, Reason: "its original left"}, "a contest needs evidence"},
		{authority.Contest{Kind: authority.ContestContradiction, Reason: "contradicted", EvidenceID: "ev_nope"}, "no such evidence"},
	} {
		_, err := try(f, d, authority.Change{Op: authority.OpContest, CardID: law.ID, Contest: c.ct})
		wantKind(t, c.want, err, hosterr.KindInvalid, c.want)
	}
	if len(contests(t, f, law.ID)) != 0 {
		t.Fatalf("a refused contest was written")
	}
	ct := authority.Contest{Kind: authority.ContestContradiction, Reason: "a hotfix went to main", EvidenceID: ev, Source: "adoption:ad_1"}
	out := f.Apply(t, authority.Change{Op: authority.OpContest, CardID: law.ID, Contest: ct})
	if out.Contest == nil || out.Event.DecidedBy != domain.DecidedByRule || out.Event.ToStatus != domain.StatusCanonical {
		t.Errorf("contest: %+v", out)
	}
	again := f.Apply(t, authority.Change{Op: authority.OpContest, CardID: law.ID, Contest: ct})
	if again.Contest != nil || len(again.Events) != 0 || len(contests(t, f, law.ID)) != 1 {
		t.Errorf("the same contest twice: %+v, %d open", again, len(contests(t, f, law.ID)))
	}
	if got := card(t, f, law.ID); got.Status != domain.StatusCanonical {
		t.Errorf("a contest changed the status to %s", got.Status)
	}
	if out := f.Apply(t, authority.Change{Op: authority.OpContest, CardID: cand.ID, Contest: ct}); out.Contest != nil || len(contests(t, f, cand.ID)) != 0 {
		t.Errorf("a candidate was contested: %+v", out)
	}
	ws := f.Apply(t, authority.Change{Op: authority.OpContest, CardID: law.ID, Contest: authority.Contest{Kind: authority.ContestWitnessSuperseded, Reason: "its original left", Source: cand.ID}})
	if ws.Contest == nil || len(contests(t, f, law.ID)) != 2 {
		t.Errorf("witness_superseded contest: %+v", ws)
	}
}

// Resolve closes a card's contests on verification newer than them, by
// the gate; with none it is denied; an uncontested card has nothing to
// resolve.
func TestResolveNeedsNewerVerification(t *testing.T) {
	f := jobtest.New(t, jobtest.Options{Git: true})
	d := f.Door()
	c := seed(t, f, jobtest.Card{Statement: "Never push to main", Tier: domain.TierDaoRen, Status: domain.StatusCanonical})
	_, err := try(f, d, authority.Change{Op: authority.OpResolve, CardID: c.ID})
	wantKind(t, "resolve an uncontested card", err, hosterr.KindInvalid, "not contested: there is nothing to resolve")
	f.Advance(time.Minute)
	ce := f.Evidence(t, domain.AnchorWorktree, "a hotfix went to main").ID
	f.Apply(t, authority.Change{Op: authority.OpLink, CardID: c.ID, Refs: refs(domain.RoleCounterexample, ce)})
	out, err := try(f, d, authority.Change{Op: authority.OpResolve, CardID: c.ID})
	wantKind(t, "resolve without verification", err, hosterr.KindDenied, "gate denied resolving "+c.ID)
	if out.Gate == nil || out.Gate.Allow {
		t.Errorf("denial's gate: %+v", out.Gate)
	}
	if len(contests(t, f, c.ID)) != 1 {
		t.Fatalf("a denied resolve closed the contest")
	}
	f.Advance(time.Minute)
	ver := f.Evidence(t, domain.AnchorWorktree, "branch protection is on again").ID
	out = f.Apply(t, authority.Change{Op: authority.OpResolve, CardID: c.ID, Refs: refs(domain.RoleVerification, ver), Reason: "protected again"})
	if out.Event.DecidedBy != domain.DecidedByGate || out.Closed != 1 || len(contests(t, f, c.ID)) != 0 {
		t.Errorf("resolve: %+v", out)
	}
}

// Publish copies an authoritative card one anchor outward, decided by the
// gate; the original points at its copy.
func TestPublishOneStepOutward(t *testing.T) {
	ctx := context.Background()
	f := jobtest.New(t, jobtest.Options{Git: true})
	d := f.Door()
	c := seed(t, f, jobtest.Card{Statement: "Never push to main", Tier: domain.TierDaoRen, Status: domain.StatusPromoted})
	cand := seed(t, f, jobtest.Card{Statement: "Maybe squash merges", Tier: domain.TierShu})
	for _, x := range []struct {
		id, to, want string
	}{
		{c.ID, "moon", `--to "moon" is not valid`},
		{c.ID, "global", "publish moves one step at a time"},
		{cand.ID, "repo", "only authoritative cards"},
	} {
		_, err := try(f, d, authority.Change{Op: authority.OpPublish, CardID: x.id, Target: x.to})
		wantKind(t, x.want, err, hosterr.KindInvalid, x.want)
	}
	out := f.Apply(t, authority.Change{Op: authority.OpPublish, CardID: c.ID, Target: "repo", Reason: "the team's rule"})
	if out.CopyID == "" || out.Event.DecidedBy != domain.DecidedByGate || out.Event.Type != domain.EventPublished {
		t.Fatalf("publish: %+v", out)
	}
	cp := card(t, f, out.CopyID)
	if cp.OriginCard != c.ID || cp.Statement != c.Statement || cp.Status != c.Status {
		t.Errorf("copy: %+v", cp)
	}
	if links, _ := f.Store.Links(ctx, cp.ID); len(links) != 1 {
		t.Errorf("copy's links: %v; want the original's one", links)
	}
	if got := card(t, f, c.ID); got.PublishedTo != cp.ID {
		t.Errorf("original published_to %q, want %s", got.PublishedTo, cp.ID)
	}
	_, err := try(f, d, authority.Change{Op: authority.OpPublish, CardID: c.ID, Target: "repo"})
	wantKind(t, "publish twice", err, hosterr.KindInvalid, "was published already")

	// Retiring the original contests its copy: its witness is gone.
	f.Apply(t, authority.Change{Op: authority.OpRetire, CardID: c.ID, Reason: "no longer true"})
	if cs := contests(t, f, cp.ID); len(cs) != 1 || cs[0].Kind != authority.ContestWitnessSuperseded || cs[0].Source != c.ID {
		t.Errorf("copy's contests after the original retired: %+v", cs)
	}
	if got := card(t, f, cp.ID); got.Status != domain.StatusPromoted {
		t.Errorf("copy is %s; a contest changes no status", got.Status)
	}
	// A repository card steps out to global, where it is of domain global.
	g := f.Apply(t, authority.Change{Op: authority.OpPublish, CardID: seed(t, f, jobtest.Card{Statement: "Sign commits", Tier: domain.TierShu, Status: domain.StatusPromoted, Anchor: domain.AnchorRepo}).ID, Target: "global"})
	if gc := card(t, f, g.CopyID); gc.Domain != domain.DomainGlobal {
		t.Errorf("global copy's domain %s, want global", gc.Domain)
	}
}

// Govern changes a card's attributes, a person's decision; no change is
// refused.
func TestGovern(t *testing.T) {
	f := jobtest.New(t, jobtest.Options{Git: true})
	d := f.Door()
	c := seed(t, f, jobtest.Card{Statement: "Never push to main", Tier: domain.TierDaoRen, Status: domain.StatusPromoted})
	_, err := try(f, d, authority.Change{Op: authority.OpGovern, CardID: c.ID, From: "standard", To: "standard", Attrs: &store.CardAttrs{}})
	wantKind(t, "govern with no change", err, hosterr.KindInvalid, "nothing to change")
	p := string(domain.PersistenceProtected)
	out := f.Apply(t, authority.Change{Op: authority.OpGovern, CardID: c.ID, From: "standard", To: p, Attrs: &store.CardAttrs{Persistence: &p}, Reason: "keep it"})
	if out.Event.DecidedBy != domain.DecidedByHuman || card(t, f, c.ID).Persistence != domain.PersistenceProtected {
		t.Errorf("govern: %+v", out.Event)
	}
}

// A card that supersedes another retires it when it becomes
// authoritative: at once for a direct write, at its promotion otherwise.
func TestSupersedeRetiresTheOldCard(t *testing.T) {
	f := jobtest.New(t, jobtest.Options{Git: true})
	d := f.Door()
	old := seed(t, f, jobtest.Card{Statement: "Deploy on Fridays", Tier: domain.TierShu, Status: domain.StatusPromoted})
	ev := f.Evidence(t, domain.AnchorWorktree, "Monday deploys went well").ID
	nw := f.Apply(t, authority.Change{Op: authority.OpCreate, Card: newCard(f, "Deploy on Mondays", domain.TierShu, domain.StatusCandidate, domain.AnchorWorktree), Refs: refs(domain.RoleSupporting, ev), Supersedes: old.ID})
	if card(t, f, old.ID).Status != domain.StatusPromoted {
		t.Fatalf("a candidate retired the card it supersedes")
	}
	ver := f.Evidence(t, domain.AnchorWorktree, "four Monday deploys, no incident").ID
	out := f.Apply(t, authority.Change{Op: authority.OpPromote, CardID: nw.Card.ID, Refs: refs(domain.RoleVerification, ver)})
	if got := card(t, f, old.ID); got.Status != domain.StatusRetired || len(out.Events) != 3 {
		t.Errorf("after promoting its replacement the old card is %s (%d events)", got.Status, len(out.Events))
	}
	if evs := events(t, f, old.ID); evs[len(evs)-1].DecidedBy != domain.DecidedByGate {
		t.Errorf("old card retired by %s, want the gate", evs[len(evs)-1].DecidedBy)
	}
	_, err := try(f, d, authority.Change{Op: authority.OpCreate, Card: newCard(f, "Deploy on Tuesdays", domain.TierShu, domain.StatusCandidate, domain.AnchorWorktree), Supersedes: old.ID})
	wantKind(t, "supersede a retired card", err, hosterr.KindInvalid, "nothing left to supersede")

	// A direct write retires the card it replaces in the same decision.
	other := seed(t, f, jobtest.Card{Statement: "Tag releases by hand", Tier: domain.TierShu, Status: domain.StatusPromoted})
	dw := f.Apply(t, authority.Change{Op: authority.OpDirect, Card: newCard(f, "Tag releases in CI", domain.TierShu, domain.StatusPromoted, domain.AnchorWorktree), Supersedes: other.ID})
	if got := card(t, f, other.ID); got.Status != domain.StatusRetired || dw.Events[len(dw.Events)-1].DecidedBy != domain.DecidedByHuman {
		t.Errorf("direct write: the replaced card is %s", got.Status)
	}
}

// A card or evidence of another repository is refused: no change reaches
// another checkout's memory.
func TestAnotherRepositorysCardIsRefused(t *testing.T) {
	f := jobtest.New(t, jobtest.Options{Git: true})
	theirs := seed(t, f, jobtest.Card{Statement: "B deploys on Fridays", Tier: domain.TierShu, Status: domain.StatusPromoted, Anchor: domain.AnchorRepo})
	theirEv := f.Evidence(t, domain.AnchorRepo, "B's deploy broke").ID
	// The same palace seen from a checkout of another repository.
	other := jobtest.New(t, jobtest.Options{Git: true, Remote: "https://github.com/acme/other.git"})
	env := f.Env
	env.Loc = other.Loc
	g := *f
	g.Env = env
	d := g.Door()
	_, err := try(&g, d, authority.Change{Op: authority.OpRetire, CardID: theirs.ID})
	wantKind(t, "retire another repository's card", err, hosterr.KindInvalid, "not to this checkout")
	mine := seed(t, &g, jobtest.Card{Statement: "A deploys on Mondays", Tier: domain.TierShu, Status: domain.StatusPromoted})
	_, err = try(&g, d, authority.Change{Op: authority.OpLink, CardID: mine.ID, Refs: refs(domain.RoleCounterexample, theirEv)})
	wantKind(t, "cite another repository's evidence", err, hosterr.KindInvalid, "belongs to another repository or worktree")
	if card(t, f, theirs.ID).Status != domain.StatusPromoted || len(contests(t, f, mine.ID)) != 0 {
		t.Errorf("a refused change wrote")
	}
}

// A link the card has is added once; a counterexample on an authoritative
// card contests it, once.
func TestLinkOnce(t *testing.T) {
	f := jobtest.New(t, jobtest.Options{Git: true})
	c := seed(t, f, jobtest.Card{Statement: "Never push to main", Tier: domain.TierDaoRen, Status: domain.StatusPromoted})
	ce := f.Evidence(t, domain.AnchorWorktree, "a hotfix went to main").ID
	first := f.Apply(t, authority.Change{Op: authority.OpLink, CardID: c.ID, Refs: refs(domain.RoleCounterexample, ce), Note: "hotfix"})
	if len(first.Added) != 1 || first.Contest == nil || first.Added[0].Note != "hotfix" {
		t.Errorf("first link: %+v", first)
	}
	again := f.Apply(t, authority.Change{Op: authority.OpLink, CardID: c.ID, Refs: refs(domain.RoleCounterexample, ce)})
	if len(again.Added) != 0 || again.Contest != nil || len(contests(t, f, c.ID)) != 1 {
		t.Errorf("the same link again: %+v", again)
	}
	_, err := try(f, f.Door(), authority.Change{Op: authority.OpLink, CardID: c.ID, Refs: refs(domain.RoleSupporting, ce)})
	wantKind(t, "a second role", err, hosterr.KindInvalid, "one role per card")
}

func TestOutward(t *testing.T) {
	for k, want := range map[domain.AnchorKind]domain.AnchorKind{domain.AnchorWorktree: domain.AnchorRepo, domain.AnchorRepo: domain.AnchorGlobal, domain.AnchorGlobal: ""} {
		if got := authority.Outward(k); got != want {
			t.Errorf("Outward(%s) = %q, want %q", k, got, want)
		}
	}
}
