package domain_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/palacehq/palace/domain"
)

func TestParseAcceptsEveryValueAndRejectsOthers(t *testing.T) {
	for _, v := range domain.Tiers {
		if got, err := domain.ParseTier(string(v)); err != nil || got != v {
			t.Errorf("ParseTier(%q) = %q, %v", v, got, err)
		}
	}
	for _, v := range domain.Roles {
		if got, err := domain.ParseRole(string(v)); err != nil || got != v || !got.Valid() {
			t.Errorf("ParseRole(%q) = %q, %v", v, got, err)
		}
	}
	_, err := domain.ParseRole("counter-example")
	var ie *domain.InvalidError
	if !errors.As(err, &ie) || ie.Field != "role" || ie.Value != "counter-example" || len(ie.Valid) != len(domain.Roles) {
		t.Fatalf("ParseRole(counter-example) = %v, want an InvalidError naming the role and the valid ones", err)
	}
	if want := `role "counter-example" is not valid: use one of supporting, verification, teaching, counterexample`; err.Error() != want {
		t.Errorf("message = %q, want %q", err.Error(), want)
	}
	if _, err := domain.ParseStatus(""); err == nil {
		t.Error("ParseStatus(\"\") accepted the empty status")
	}
	if domain.Lane("core ").Valid() || !domain.LaneInspectorOnly.Valid() {
		t.Error("Lane.Valid is wrong about core-with-a-space or inspector_only")
	}
}

func TestStatusSets(t *testing.T) {
	if got := domain.AuthoritativeStatuses(); len(got) != 2 || got[0] != domain.StatusPromoted || got[1] != domain.StatusCanonical {
		t.Errorf("AuthoritativeStatuses() = %v", got)
	}
	if got := domain.LiveStatuses(); len(got) != 3 || got[0] != domain.StatusCandidate {
		t.Errorf("LiveStatuses() = %v", got)
	}
	if domain.StatusDemoted.Authoritative() || domain.StatusRetired.Live() {
		t.Error("a demoted card counts as authoritative, or a retired one as live")
	}
}

func TestTierRank(t *testing.T) {
	for i, tier := range domain.Tiers {
		if tier.Rank() != i {
			t.Errorf("%s.Rank() = %d, want %d", tier, tier.Rank(), i)
		}
	}
	if r := domain.Tier("unknown").Rank(); r != len(domain.Tiers) {
		t.Errorf("unknown tier ranks %d, want last (%d)", r, len(domain.Tiers))
	}
}

func TestCountRolesCountsEachPieceOfEvidenceOnce(t *testing.T) {
	links := []domain.Link{
		{EvidenceID: "ev_1", Role: domain.RoleSupporting},
		{EvidenceID: "ev_2", Role: domain.RoleSupporting, Original: "ev_1"}, // a duplicate of ev_1
		{EvidenceID: "ev_1", Role: domain.RoleVerification},                 // linked again in a second role
		{EvidenceID: "ev_3", Role: domain.RoleCounterexample},
		{EvidenceID: "ev_4", Role: "unknown"},
	}
	got := domain.CountRoles(links)
	if want := (domain.RoleCounts{Supporting: 1, Counterexample: 1}); got != want {
		t.Errorf("CountRoles = %+v, want %+v", got, want)
	}
	all := domain.CountLinks(links)
	if want := (domain.RoleCounts{Supporting: 2, Verification: 1, Counterexample: 1}); all != want {
		t.Errorf("CountLinks = %+v, want %+v", all, want)
	}
	if all.Total() != 4 || all.Of(domain.RoleSupporting) != 2 || all.Of("unknown") != 0 {
		t.Errorf("Total/Of = %d/%d/%d", all.Total(), all.Of(domain.RoleSupporting), all.Of("unknown"))
	}
}

// TestRoleCountsJSON pins the wire shape the gate's input and the CLI's
// JSON share: one member per role, zeros included.
func TestRoleCountsJSON(t *testing.T) {
	b, err := json.Marshal(domain.RoleCounts{Teaching: 2})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"supporting":0,"verification":0,"teaching":2,"counterexample":0}`; string(b) != want {
		t.Errorf("json = %s, want %s", b, want)
	}
}

func TestScopeString(t *testing.T) {
	s := domain.Scope{Paths: []string{"store/**", "api/**"}, Languages: []string{"go"}}
	if got, want := s.String(), "paths store/**, api/** · languages go"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if (domain.Scope{}).String() != "" {
		t.Error("an empty scope is not described as empty")
	}
}
