package pack

import (
	"context"
	"strings"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/cardview"
)

// contestLine is the one-line warning of a rendered reference: the kinds
// of contest, then the contradicting evidence with its source (or, for a
// contest without evidence, what the person who opened it said).
func contestLine(c *cardview.ItemContest) string {
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
