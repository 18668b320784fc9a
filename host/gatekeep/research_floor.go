package gatekeep

import (
	"context"
	"fmt"
	"strings"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/store"
)

// researchFloor: research can never by itself supply the teaching or review
// a dao tier needs. A dao_tian or dao_ren card whose supporting,
// verification and teaching evidence is all research is refused, and
// teaching links to research do not count. No policy lifts it; an
// unreadable provenance refuses too.
func researchFloor(ctx context.Context, st *store.Store, c domain.Card, links []domain.Link) []string {
	if !strings.HasPrefix(string(c.Tier), "dao") {
		return nil
	}
	var ids []string
	for _, l := range links {
		if l.Role != domain.RoleCounterexample {
			ids = append(ids, l.EvidenceID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	// Links read from the store (and from card files) carry their
	// evidence's provenance; read it only for those that do not, and only
	// with a database (`cards check` has none).
	prov := map[string]domain.Provenance{}
	var unknown []string
	for _, l := range links {
		if l.Provenance != "" {
			prov[l.EvidenceID] = l.Provenance
		} else if l.Role != domain.RoleCounterexample {
			unknown = append(unknown, l.EvidenceID)
		}
	}
	if len(unknown) > 0 && st != nil {
		evs, err := st.EvidenceByIDs(ctx, unknown)
		if err != nil {
			return []string{fmt.Sprintf("floor: the provenance of %s's evidence could not be read, denying: %v", c.ID, err)}
		}
		for id, ev := range evs {
			prov[id] = ev.Provenance
		}
	}
	research, teaching, researchTeaching := 0, 0, 0
	for _, l := range links {
		if l.Role == domain.RoleCounterexample {
			continue
		}
		isResearch := prov[l.EvidenceID] == "research"
		if isResearch {
			research++
		}
		if l.Role == domain.RoleTeaching {
			teaching++
			if isResearch {
				researchTeaching++
			}
		}
	}
	var out []string
	if research == len(ids) {
		out = append(out, fmt.Sprintf("floor: research evidence alone cannot make a %s card authoritative (all %d linked evidence rows are research): link verification or teaching recorded by a person or at run time", c.Tier, research))
	} else if teaching > 0 && researchTeaching == teaching && c.Tier == domain.TierDaoTian {
		out = append(out, fmt.Sprintf("floor: research cannot be a dao_tian card's teaching (its %d teaching links are research): link what a person taught (human provenance) as teaching", teaching))
	}
	return out
}
