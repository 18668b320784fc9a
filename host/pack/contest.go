package pack

import (
	"context"
	"slices"
	"strings"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/policies"
	"github.com/palacehq/palace/store"
)

// ItemContest is the warning a contested card carries where it is shown:
// the card keeps its own statement, and the warning names what contests it
// and the evidence it rests on. What an agent wrote when it raised the
// contest (a signal's note, a link's note) is never part of it: such text
// would otherwise be read in the card's place by every later agent.
type ItemContest struct {
	Kinds []string `json:"kinds"`
	Since string   `json:"since"`
	// Reasons are the reasons of the contests a person opened (palace's own
	// words for those it opened itself); never an agent's.
	Reasons []string `json:"reasons"`
	// Citations are the contradicting evidence (role counterexample, or the
	// contest's kind).
	Citations []Citation `json:"citations"`
	// Action is what a human does about it.
	Action string `json:"action"`
}

// ContestOf is the warning of a card with these open contests, nil for none.
func ContestOf(contests []store.Contest) *ItemContest {
	if len(contests) == 0 {
		return nil
	}
	gc := GateContest(contests)
	out := &ItemContest{Kinds: gc.Kinds, Since: gc.Since, Reasons: []string{}, Citations: []Citation{},
		Action: contestAction(contests[0].CardID)}
	for _, c := range contests {
		if c.ActorType == domain.ActorHuman && c.Reason != "" {
			out.Reasons = append(out.Reasons, c.Reason)
		}
		if c.EvidenceID != "" {
			// A contest's kind names the role of its evidence
			// (counterexample) or what contradicted the card.
			out.Citations = append(out.Citations, Citation{EvidenceID: c.EvidenceID, Role: domain.Role(c.Kind), SourceRef: c.SourceRef})
		}
	}
	return out
}

func contestAction(id string) string {
	return "demote it (`palace demote " + id + " --counterexample EV --reason R`) or resolve it with newer verification (`palace resolve " + id + " --verification EV --reason R`)"
}

// Detail names what contests the card: its kinds, then the contradicting
// evidence with its source, then what the people who opened a contest
// said.
func (c *ItemContest) Detail() string {
	parts := []string{strings.Join(c.Kinds, ", ")}
	for _, cit := range c.Citations {
		s := cit.EvidenceID
		if cit.SourceRef != "" {
			s += " (" + oneLine(cit.SourceRef) + ")"
		}
		parts = append(parts, s)
	}
	for _, r := range c.Reasons {
		parts = append(parts, oneLine(r))
	}
	return strings.Join(parts, " · ")
}

// contestLine is the one-line warning of a rendered reference: the kinds
// of contest, then the contradicting evidence with its source (or, for a
// contest without evidence, what the person who opened it said).
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
func (pl *Pipeline) applyContests(ctx context.Context, a *assembly) error {
	var ids []string
	for _, c := range a.considered {
		if c.laned {
			ids = append(ids, c.card.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	open, err := pl.openContests(ctx, ids)
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

// GateContest is the contest part of the gate's input: whether a card is
// contested, since when (the newest contradicting evidence, else the
// contest's own time) and by what kinds, sorted.
func GateContest(contests []store.Contest) policies.GateContest {
	gc := policies.GateContest{Kinds: []string{}}
	for _, c := range contests {
		gc.Contested = true
		at := c.CreatedAt
		if c.EvidenceAt != "" {
			at = c.EvidenceAt
		}
		if at > gc.Since {
			gc.Since = at
		}
		if !slices.Contains(gc.Kinds, c.Kind) {
			gc.Kinds = append(gc.Kinds, c.Kind)
		}
	}
	slices.Sort(gc.Kinds)
	return gc
}
