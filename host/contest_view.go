package host

import (
	"context"
	"strings"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/store"
)

// ItemContest is the warning a contested card carries where it is shown.
type ItemContest struct {
	Kinds   []string `json:"kinds"`
	Since   string   `json:"since"`
	Reasons []string `json:"reasons"`
	// Citations are the contradicting evidence (role counterexample, or the
	// contest's kind).
	Citations []Citation `json:"citations"`
	// Action is what a human does about it.
	Action string `json:"action"`
}

func itemContest(contests []store.Contest) *ItemContest {
	if len(contests) == 0 {
		return nil
	}
	gc := gateContest(contests)
	out := &ItemContest{Kinds: gc.Kinds, Since: gc.Since, Reasons: []string{}, Citations: []Citation{},
		Action: contestAction(contests[0].CardID)}
	for _, c := range contests {
		out.Reasons = append(out.Reasons, c.Reason)
		if c.EvidenceID != "" {
			role := c.Kind
			if role == ContestCounterexample {
				role = string(domain.RoleCounterexample)
			}
			out.Citations = append(out.Citations, Citation{EvidenceID: c.EvidenceID, Role: domain.Role(role), SourceRef: c.SourceRef})
		}
	}
	return out
}

func contestAction(id string) string {
	return "demote it (`palace demote " + id + " --counterexample EV --reason R`) or resolve it with newer verification (`palace resolve " + id + " --verification EV --reason R`)"
}

// contestLine is the one-line warning of a rendered reference.
func contestLine(c *ItemContest) string {
	parts := []string{strings.Join(c.Kinds, ", ")}
	for _, cit := range c.Citations {
		s := "`" + cit.EvidenceID + "`"
		if cit.SourceRef != "" {
			s += " (" + oneLine(cit.SourceRef) + ")"
		}
		parts = append(parts, s)
	}
	if len(c.Citations) == 0 && len(c.Reasons) > 0 {
		parts = append(parts, oneLine(c.Reasons[0]))
	}
	return strings.Join(parts, " · ") + " — do not apply it until a human demotes or resolves it"
}

// applyContests reads the open contests of the laned cards and moves the
// contested ones out of the inline lanes: they stay as references, with
// the warning.
func (h *Host) applyContests(ctx context.Context, a *assembly) error {
	var ids []string
	for _, c := range a.considered {
		if c.laned {
			ids = append(ids, c.card.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	open, err := h.openContests(ctx, ids)
	if err != nil {
		return err
	}
	for _, c := range a.considered {
		cs := open[c.card.ID]
		if len(cs) == 0 {
			continue
		}
		c.contests = cs
		if c.lane.Lane == domain.LaneCore || c.lane.Lane == domain.LaneScoped {
			c.lane.Lane, c.lane.RenderForm = domain.LaneRefOnly, domain.FormRefOnly
		}
	}
	return nil
}

// ContestsOf returns the open contests of cards, keyed by card id, for
// surfaces that mark contested cards (hover, diagnostics). A failure is
// KindInternal.
func (h *Host) ContestsOf(ctx context.Context, ids []string) (map[string][]store.Contest, error) {
	return h.openContests(ctx, ids)
}
