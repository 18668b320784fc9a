package gatekeep

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/jobenv"
	"github.com/palacehq/palace/internal/hosterr"
	"github.com/palacehq/palace/store"
)

// TestFactsOfCountsWhatTheGateMayTrust checks the counting rules the gate
// input rests on: a duplicate counts as its original, once; teaching counts
// only human provenance recorded in human mode; a counterexample counts
// until a newer verification outweighs it; source refs are distinct and
// sorted.
func TestFactsOfCountsWhatTheGateMayTrust(t *testing.T) {
	links := []domain.Link{
		{EvidenceID: "ev1", Role: domain.RoleSupporting, SourceRef: "b.go:1", EvidenceAt: "2026-01-01"},
		{EvidenceID: "ev2", Original: "ev1", Role: domain.RoleSupporting, SourceRef: "b.go:1", EvidenceAt: "2026-01-01"},
		{EvidenceID: "ev3", Role: domain.RoleSupporting, SourceRef: "a.go:1", EvidenceAt: "2026-01-02"},
		{EvidenceID: "ev4", Role: domain.RoleTeaching, Provenance: "human", ActorType: "human", EvidenceAt: "2026-01-03"},
		{EvidenceID: "ev5", Role: domain.RoleTeaching, Provenance: "human", ActorType: "agent", EvidenceAt: "2026-01-03"},
		{EvidenceID: "ev6", Role: domain.RoleCounterexample, EvidenceAt: "2026-01-04"},
		{EvidenceID: "ev7", Role: domain.RoleVerification, EvidenceAt: "2026-01-05"},
		{EvidenceID: "ev8", Role: domain.RoleCounterexample, EvidenceAt: "2026-01-06"},
	}
	f := factsOf(links, []store.Contest{{Kind: "contradiction", CreatedAt: "2026-01-07"}})
	want := domain.RoleCounts{Supporting: 2, Verification: 1, Teaching: 1, Counterexample: 1}
	if f.counts != want {
		t.Errorf("counts = %+v, want %+v", f.counts, want)
	}
	wantAll := domain.RoleCounts{Supporting: 2, Verification: 1, Teaching: 2, Counterexample: 2}
	if f.all != wantAll {
		t.Errorf("all = %+v, want %+v", f.all, wantAll)
	}
	if !slices.Equal(f.refs.Supporting, []string{"a.go:1", "b.go:1"}) {
		t.Errorf("supporting refs = %v, want [a.go:1 b.go:1]", f.refs.Supporting)
	}
	if f.newest.Counterexample != "2026-01-06" || f.newest.Verification != "2026-01-05" {
		t.Errorf("newest = %+v", f.newest)
	}
	if !f.contest.Contested || !slices.Equal(f.contest.Kinds, []string{"contradiction"}) {
		t.Errorf("contest = %+v, want contested by a contradiction", f.contest)
	}
}

func TestPromoteTargetAndCanPromote(t *testing.T) {
	dao := domain.Card{Tier: domain.TierDaoTian}
	shu := domain.Card{Tier: "shu"}
	if got, _ := PromoteTarget(dao, ""); got != domain.StatusCanonical {
		t.Errorf("dao_tian default target = %s, want canonical", got)
	}
	if got, _ := PromoteTarget(shu, ""); got != domain.StatusPromoted {
		t.Errorf("shu default target = %s, want promoted", got)
	}
	if _, err := PromoteTarget(shu, "retired"); hosterr.KindOf(err) != hosterr.KindInvalid {
		t.Errorf("target retired: err = %v, want KindInvalid", err)
	}
	for _, tc := range []struct {
		from, to domain.Status
		ok       bool
	}{
		{domain.StatusCandidate, domain.StatusPromoted, true},
		{domain.StatusPromoted, domain.StatusPromoted, false},
		{domain.StatusPromoted, domain.StatusCanonical, true},
		{domain.StatusRetired, domain.StatusCanonical, false},
		{domain.StatusDemoted, domain.StatusPromoted, true},
	} {
		if got := CanPromote(tc.from, tc.to); got != tc.ok {
			t.Errorf("CanPromote(%s, %s) = %v, want %v", tc.from, tc.to, got, tc.ok)
		}
	}
}

func TestKeeperModeDecidesReviewerAndHumanOnlyChanges(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	agent := &Keeper{Env: jobenv.Env{Mode: "agent", Actor: "bot", Now: func() time.Time { return now }}}
	human := &Keeper{Env: jobenv.Env{Mode: "human", Actor: "ana", Now: func() time.Time { return now }}}
	if r := agent.Reviewer("ana"); r.Name != "bot" || r.Type != "agent" {
		t.Errorf("agent reviewer = %+v: an agent cannot name a human reviewer", r)
	}
	if r := human.Reviewer(""); r.Name != "ana" || r.Type != "human" {
		t.Errorf("human default reviewer = %+v", r)
	}
	if err := agent.RequireHuman("promote"); hosterr.KindOf(err) != hosterr.KindMode {
		t.Errorf("agent promote: err = %v, want KindMode", err)
	}
	if err := human.RequireHuman("promote"); err != nil {
		t.Errorf("human promote: %v", err)
	}
	e := human.NewEvent("kc_1", domain.Event{Type: domain.EventPromoted})
	if e.CardID != "kc_1" || e.Actor != "ana" || e.ActorType != "human" || e.CreatedAt != store.FormatTime(now) || e.ID == "" {
		t.Errorf("NewEvent = %+v", e)
	}
}

func TestSecretFloorNamesEachFinding(t *testing.T) {
	if err := SecretFloor("nothing to see"); err != nil {
		t.Fatalf("clean text: %v", err)
	}
	err := SecretFloor("key\nAKIAIOSFODNN7EXAMPLE\n")
	var he *hosterr.Error
	if !errors.As(err, &he) || he.Kind != hosterr.KindDenied {
		t.Fatalf("err = %v, want KindDenied", err)
	}
	if len(he.Reasons) == 0 || !strings.HasPrefix(he.Reasons[0], "floor: line 2: ") {
		t.Errorf("reasons = %q, want a floor naming line 2", he.Reasons)
	}
}
