package authority

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/gatekeep"
	"github.com/palacehq/palace/policies"
	"github.com/palacehq/palace/store"
)

// FileClaim is one card file an import proposes: its claims are claims.
type FileClaim struct {
	// Card is the card as the file describes it, at this repository's
	// anchor; its Status is the status the file claims.
	Card domain.Card
	// Links are the file's citations with the facts of their evidence as
	// this palace holds or verified them.
	Links []domain.Link
	// Current is the card as this palace holds it, Have its links here;
	// nil for a new card.
	Current *domain.Card
	Have    []domain.Link
	// Contests are the card's open contests here.
	Contests []store.Contest
	// Source is the file and the commit it comes from.
	Source policies.GateSource
	// Reviewer is who the file says reviewed its last lifecycle change
	// (the importer makes it an agent unless the commit is reviewed).
	Reviewer policies.Reviewer
	// Reason and Data go into the imported event.
	Reason string
	Data   map[string]any
}

// Import is the door's decision on one FileClaim, made only by
// DecideImport and written only by WriteImports.
type Import struct {
	claim FileClaim
	// write is set when the import changes the palace; fresh are the
	// file's links this palace lacks.
	write   bool
	fresh   []domain.Link
	status  domain.Status
	fields  bool
	decider domain.DecidedBy
	gate    *gatekeep.Result
	held    []string
}

// Writes reports whether the import changes the palace.
func (i Import) Writes() bool { return i.write }

// Status is the status the card has after the import.
func (i Import) Status() domain.Status { return i.status }

// Held are the reasons the file's claim was not taken as it stands (the
// card keeps this palace's version, or is a candidate); nil when taken.
func (i Import) Held() []string { return i.held }

// Gate is the gate's answer on the claim, when the gate was asked.
func (i Import) Gate() *gatekeep.Result { return i.gate }

// DecideImport decides what a card file may change. Every claim of
// authority (a new authoritative card, a change to an authoritative card's
// governed fields or status, a raise) is a gate decision with Source in the
// input; a refused claim keeps this palace's version (Writes false) or makes
// a new card a candidate, reasons in Held. What bears no authority is taken
// by rule. It writes nothing and is safe for concurrent use.
func (d *Door) DecideImport(ctx context.Context, cl FileClaim) Import {
	im := Import{claim: cl, status: cl.Card.Status, decider: domain.DecidedByRule}
	claimed := cl.Card.Status
	ask := func(action, target string) bool {
		g := d.gate.EvaluateFrom(ctx, cl.Card, cl.Links, cl.Contests, action, target, cl.Reviewer, false, cl.Source)
		im.gate = &g
		if g.Allow {
			im.decider = domain.DecidedByGate
			return true
		}
		im.held = g.Reasons
		return false
	}
	if cl.Current == nil {
		im.write, im.fields = true, true
		if claimed.Authoritative() && !ask(string(domain.ActionPromote), string(claimed)) {
			im.status = domain.StatusCandidate
		}
		return im
	}
	cur := *cl.Current
	im.fresh = missingLinks(cl.Links, cl.Have)
	im.fields = governedDiffer(cur, cl.Card)
	if !im.fields && claimed == cur.Status {
		// New citations are links, which a rule takes (a counterexample
		// contests an authoritative card), as `palace card link` does.
		im.write, im.status = len(im.fresh) > 0, cur.Status
		return im
	}
	im.write = true
	switch {
	case cur.Status.Authoritative() && claimed.Authoritative():
		if !ask(string(domain.ActionPromote), string(claimed)) {
			im.write, im.status = false, cur.Status
		}
	case cur.Status.Authoritative():
		action := domain.ActionRetire
		switch claimed {
		case domain.StatusDemoted:
			action = domain.ActionDemote
		case domain.StatusCandidate:
			im.write, im.status = false, cur.Status
			im.held = []string{fmt.Sprintf("a card file cannot make %s card %s a candidate again: demote or retire it", cur.Status, cur.ID)}
			return im
		}
		if !ask(string(action), string(claimed)) {
			im.write, im.status = false, cur.Status
		}
	case claimed.Authoritative():
		if !ask(string(domain.ActionPromote), string(claimed)) {
			// The candidate's text is taken; its status stays.
			im.status = cur.Status
			im.write = im.fields
		}
	}
	return im
}

// missingLinks are the links of want that have lacks, by evidence and role.
func missingLinks(want, have []domain.Link) []domain.Link {
	type key struct {
		ev   string
		role domain.Role
	}
	got := make(map[key]bool, len(have))
	for _, l := range have {
		got[key{l.EvidenceID, l.Role}] = true
	}
	var out []domain.Link
	for _, l := range want {
		if k := (key{l.EvidenceID, l.Role}); !got[k] {
			got[k] = true
			out = append(out, l)
		}
	}
	return out
}

// governedDiffer reports whether a and b differ in a field that bears on
// what a card says or where it applies.
func governedDiffer(a, b domain.Card) bool {
	return a.Statement != b.Statement || a.Content != b.Content || a.Tier != b.Tier || a.Domain != b.Domain ||
		a.Field != b.Field || a.Persistence != b.Persistence || a.RenderPref != b.RenderPref ||
		a.ReviewAfter != b.ReviewAfter || a.ExpiresAt != b.ExpiresAt || a.OriginCard != b.OriginCard ||
		!slices.Equal(a.Scope.Paths, b.Scope.Paths) || !slices.Equal(a.Scope.Languages, b.Scope.Languages) ||
		!slices.Equal(a.Scope.Fields, b.Scope.Fields) || !slices.Equal(a.Trigger.Patterns, b.Trigger.Patterns) ||
		!slices.Equal(a.Trigger.Intents, b.Trigger.Intents) || !slices.Equal(a.Trigger.ToolNeeds, b.Trigger.ToolNeeds)
}

// WriteImports writes the imports that change the palace, each with its
// card, links and one imported event, returning each import's event (zero
// for one that writes nothing).
func (d *Door) WriteImports(ctx context.Context, tx *store.Tx, ims []Import) ([]domain.Event, error) {
	ws := make([]store.CardWrite, 0, len(ims))
	at := make([]int, 0, len(ims))
	for i, im := range ims {
		if !im.write {
			continue
		}
		cl := im.claim
		c := cl.Card
		c.Status = im.status
		ev := domain.Event{Type: domain.EventImported, ToStatus: im.status, Reason: cl.Reason}
		w := store.CardWrite{Links: cl.Links}
		var contests []store.CardWrite
		if cl.Current == nil {
			w.Insert = &c
		} else {
			w.Links = im.fresh
			if cl.Current.Status.Authoritative() && im.status.Authoritative() {
				for _, l := range im.fresh {
					if l.Role == domain.RoleCounterexample {
						contests = append(contests, d.contestWrite(*cl.Current, Contest{Kind: ContestCounterexample,
							Reason: "counterexample " + l.EvidenceID + " " + cl.Reason, EvidenceID: l.EvidenceID}))
					}
				}
			}
			ev.FromStatus = cl.Current.Status
			if im.fields {
				w.Update = &c
			}
			if im.status != cl.Current.Status {
				w.Move = &store.StatusMove{From: cl.Current.Status, To: im.status}
			}
		}
		data := map[string]any{}
		maps.Copy(data, cl.Data)
		if len(im.held) > 0 {
			data["held"] = im.held
		}
		ev.Data = gatekeep.EventData(data)
		ev = d.event(c.ID, im.decider, ev)
		if im.gate != nil {
			ev = gateEvent(ev, *im.gate)
		}
		w.Event = ev
		ws = append(ws, w)
		at = append(at, i)
		for _, cw := range contests {
			ws = append(ws, cw)
			at = append(at, -1)
		}
	}
	done, err := tx.WriteCards(ctx, ws)
	if err != nil {
		return nil, err
	}
	out := make([]domain.Event, len(ims))
	for j, w := range done {
		if at[j] >= 0 {
			out[at[j]] = w.Event
		}
	}
	return out, nil
}
