package gatekeep_test

import (
	"context"
	"strings"
	"testing"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/gatekeep"
	"github.com/palacehq/palace/host/internal/jobtest"
)

// Research evidence alone never makes a dao card authoritative, nor is it
// a dao_tian card's teaching; a shu card and mixed evidence pass the floor.
func TestResearchFloor(t *testing.T) {
	ctx := context.Background()
	f := jobtest.New(t, jobtest.Options{Git: true})
	res0 := f.EvidenceFrom(t, domain.AnchorRepo, domain.ProvenanceResearch, "WAL readers do not block writers (sqlite.org/wal.html)").ID
	res1 := f.EvidenceFrom(t, domain.AnchorRepo, domain.ProvenanceResearch, "WAL needs shared memory (sqlite.org/wal.html)").ID
	human := f.Evidence(t, domain.AnchorRepo, "ana saw WAL help in production").ID
	link := func(id string, role domain.Role) domain.Link { return domain.Link{EvidenceID: id, Role: role} }
	dao := domain.Card{ID: "card_1", Tier: domain.TierDaoRen}
	tian := domain.Card{ID: "card_2", Tier: domain.TierDaoTian}
	for _, c := range []struct {
		name  string
		card  domain.Card
		links []domain.Link
		want  string
	}{
		{"dao on research alone", dao, []domain.Link{link(res0, domain.RoleSupporting), link(res1, domain.RoleVerification)}, "research evidence alone cannot make a dao_ren card authoritative (all 2"},
		{"a counterexample does not count", dao, []domain.Link{link(res0, domain.RoleSupporting), link(human, domain.RoleCounterexample)}, "all 1 linked"},
		{"dao with a person's evidence", dao, []domain.Link{link(res0, domain.RoleSupporting), link(human, domain.RoleVerification)}, ""},
		{"dao_tian taught by research", tian, []domain.Link{link(human, domain.RoleSupporting), link(res0, domain.RoleTeaching)}, "research cannot be a dao_tian card's teaching"},
		{"dao_tian taught by a person", tian, []domain.Link{link(res0, domain.RoleSupporting), link(human, domain.RoleTeaching)}, ""},
		{"shu on research", domain.Card{ID: "card_3", Tier: domain.TierShu}, []domain.Link{link(res0, domain.RoleSupporting)}, ""},
		{"no links", dao, nil, ""},
		// Provenance carried by the link is taken as it is.
		{"provenance on the link", dao, []domain.Link{{EvidenceID: human, Role: domain.RoleSupporting, Provenance: "research"}}, "all 1 linked"},
	} {
		got := strings.Join(gatekeep.ResearchFloor(ctx, f.Store, c.card, c.links), "; ")
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q; want %q", c.name, got, c.want)
		}
	}
}
