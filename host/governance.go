package host

import (
	"context"
	"fmt"
	"strings"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/gatekeep"
	"github.com/palacehq/palace/host/pack"
	"github.com/palacehq/palace/policies"
	"github.com/palacehq/palace/store"
)

// foreignCard refuses a card anchored outside this location's chain (another
// repository or worktree): op names what was asked. Changing another
// repository's card from here is never allowed; reading it needs allRepos.
func (h *Host) foreignCard(ctx context.Context, c domain.Card, op string) error {
	if h.visibleKind(c.AnchorID) != "" {
		return nil
	}
	ref := h.anchorRef(ctx, c.AnchorID)
	where := pack.DisplayIdentity(ref)
	if op == "read" {
		return invalid("id", "card %s is anchored to %s %s, not to this checkout: reading another repository's cards needs --all-repos", c.ID, ref.Kind, where)
	}
	return invalid("id", "card %s is anchored to %s %s, not to this checkout: %s it from a checkout of that repository", c.ID, ref.Kind, where, op)
}

// The contest kinds palace itself opens. MarkContested takes any other
// non-empty word too (an adoption "contradiction" signal, say).
const (
	ContestCounterexample    = string(domain.RoleCounterexample)
	ContestContradiction     = "contradiction"
	ContestWitnessSuperseded = "witness_superseded"
)

// ContestRequest says why a card is contested.
type ContestRequest struct {
	// Kind is counterexample, contradiction, witness_superseded or another
	// short word naming what contradicts the card. Required.
	Kind string `json:"kind"`
	// Reason says what contradicts it. Required.
	Reason string `json:"reason"`
	// EvidenceID is the contradicting evidence, if any; it must be visible
	// from here. Its citation is shown where the card is.
	EvidenceID string `json:"evidence_id,omitempty"`
	// Source names what raised the contest (a signal id, a feature).
	Source string `json:"source,omitempty"`
}

// ContestResult reports MarkContested. Contested is false when the card is
// not authoritative (only authoritative cards are contested; a candidate's
// counterexample already blocks its gate) or the same contest is open.
type ContestResult struct {
	Card      Card          `json:"card"`
	Contested bool          `json:"contested"`
	Event     *domain.Event `json:"event,omitempty"`
}

// MarkContested contests an authoritative card: it keeps its status but
// leaves the inline lanes of every context pack (shown as a reference with
// a warning and the contest's citation), the audit lists it first and
// editors warn on its trigger lines, until a human demotes it or resolves
// the contest with newer verification (Resolve). Both modes (an agent's
// contradiction is worth hearing). The card must be anchored in this
// location's chain. One transaction: the contest and an "updated" event
// with data.change = "contested".
func (h *Host) MarkContested(ctx context.Context, id string, req ContestRequest) (ContestResult, error) {
	if strings.TrimSpace(req.Kind) == "" || len(req.Kind) > 64 {
		return ContestResult{}, invalid("kind", "a contest needs a short kind: counterexample, contradiction or witness_superseded")
	}
	if strings.TrimSpace(req.Reason) == "" {
		return ContestResult{}, invalid("reason", "a contest needs a reason: say what contradicts the card")
	}
	var res ContestResult
	err := h.store.Tx(ctx, func(tx *store.Tx) error {
		c, err := h.cardIn(ctx, tx, id, "contest")
		if err != nil {
			return err
		}
		if req.EvidenceID != "" {
			if _, err := h.checkRefs(ctx, tx, id, []roleRefs{{"evidence", []string{req.EvidenceID}}}); err != nil {
				return err
			}
		}
		ev, err := h.contest(ctx, tx, c, req)
		res.Contested, res.Event = ev != nil, ev
		return err
	})
	if err != nil {
		return ContestResult{}, classify(err, "contest "+id)
	}
	res.Card, err = h.ShowCard(ctx, id)
	return res, err
}

// contest opens a contest on c when it is authoritative and the same one
// (kind and evidence) is not open already, with its event.
func (h *Host) contest(ctx context.Context, tx *store.Tx, c domain.Card, req ContestRequest) (*domain.Event, error) {
	if !c.Status.Authoritative() {
		return nil, nil
	}
	open, err := tx.OpenContests(ctx, []string{c.ID})
	if err != nil {
		return nil, err
	}
	for _, o := range open[c.ID] {
		if o.Kind == req.Kind && o.EvidenceID == req.EvidenceID && o.Source == req.Source {
			return nil, nil
		}
	}
	if err := tx.InsertContest(ctx, store.Contest{CardID: c.ID, Kind: req.Kind, Reason: req.Reason, EvidenceID: req.EvidenceID,
		Source: req.Source, Actor: h.actor, ActorType: h.actorType(), CreatedAt: h.stamp()}); err != nil {
		return nil, err
	}
	data := map[string]any{"change": "contested", "kind": req.Kind}
	if req.EvidenceID != "" {
		data["evidence_id"] = req.EvidenceID
	}
	if req.Source != "" {
		data["source"] = req.Source
	}
	ev, err := h.appendEvent(ctx, tx, c.ID, domain.Event{Type: domain.EventUpdated, FromStatus: c.Status, ToStatus: c.Status,
		Reason: req.Reason, Data: mustJSON(data)})
	return &ev, err
}

// closeContests closes c's open contests (demoted, retired or resolved).
func (h *Host) closeContests(ctx context.Context, tx *store.Tx, id, resolution string) (int, error) {
	return tx.CloseContests(ctx, id, resolution, h.stamp())
}

// supersedeCopies contests the published copies of a card that stopped
// holding (demoted or retired): their witness is gone.
func (h *Host) supersedeCopies(ctx context.Context, tx *store.Tx, c domain.Card, to domain.Status, reason string) error {
	copies, err := tx.CopiesOf(ctx, c.ID)
	if err != nil {
		return err
	}
	for _, id := range copies {
		cp, err := tx.Card(ctx, id)
		if err != nil {
			return err
		}
		if _, err := h.contest(ctx, tx, cp, ContestRequest{Kind: ContestWitnessSuperseded,
			Reason: fmt.Sprintf("its original %s was %s: %s", c.ID, to, reason), Source: c.ID}); err != nil {
			return err
		}
	}
	return nil
}

// openContests reads the open contests of cards (keyed by card id); a
// failure is KindInternal.
func (h *Host) openContests(ctx context.Context, ids []string) (map[string][]store.Contest, error) {
	m, err := h.store.OpenContests(ctx, ids)
	if err != nil {
		return nil, internal(err, "read contests")
	}
	return m, nil
}

// ResolveRequest resolves a contested (or demoted) card with newer
// verification.
type ResolveRequest struct {
	// Verification refs are linked first, in the same transaction. At least
	// one is required.
	Verification []string `json:"verification"`
	Reason       string   `json:"reason"`
	Reviewer     string   `json:"reviewer,omitempty"`
	// AllowLocalPolicy lets a repo gate policy that git does not track as
	// committed decide (recorded in the event).
	AllowLocalPolicy bool `json:"allow_local_policy,omitempty"`
}

// Resolve answers a contest with newer verification: the verification
// refs are linked, the gate's resolve action decides (the default needs a
// verification recorded after what contested the card), and on allow the
// card's open contests close and it returns to its lanes. A demoted card
// may be resolved too (its counterexamples are then outweighed, and it can
// be promoted again through the gate). Human mode only; a denial (exit 1)
// leaves links, contests and events as they were.
func (h *Host) Resolve(ctx context.Context, id string, req ResolveRequest) (ChangeResult, error) {
	if err := h.humanChange("resolve", req.Reason, "say what the newer verification shows",
		"verification", req.Verification, "record what verifies the card again first"); err != nil {
		return ChangeResult{}, err
	}
	var res ChangeResult
	var gate GateResult
	err := h.store.Tx(ctx, func(tx *store.Tx) error {
		c, err := h.cardIn(ctx, tx, id, "resolve")
		if err != nil {
			return err
		}
		open, err := tx.OpenContests(ctx, []string{id})
		if err != nil {
			return err
		}
		contests := open[id]
		if len(contests) == 0 && c.Status != domain.StatusDemoted {
			return invalid("id", "card %s is %s and not contested: there is nothing to resolve", id, c.Status)
		}
		if len(contests) == 0 {
			// A demoted card: what it answers is its counterexamples.
			links, err := tx.Links(ctx, id)
			if err != nil {
				return err
			}
			for _, l := range domain.DistinctLinks(links) {
				if l.Role == domain.RoleCounterexample {
					contests = append(contests, store.Contest{CardID: id, Kind: ContestCounterexample, EvidenceID: l.EvidenceID, EvidenceAt: l.EvidenceAt, CreatedAt: l.CreatedAt})
				}
			}
		}
		added, err := h.linkNew(ctx, tx, id, []roleRefs{{domain.RoleVerification, req.Verification}})
		if err != nil {
			return err
		}
		links, err := tx.Links(ctx, id)
		if err != nil {
			return err
		}
		gate = h.evaluateGate(ctx, c, links, contests, "resolve", string(c.Status), req.Reviewer, req.AllowLocalPolicy)
		if !gate.Allow {
			return denied(fmt.Sprintf("gate denied resolving %s", id), gate.Reasons)
		}
		if len(added) > 0 {
			if _, err := h.appendEvent(ctx, tx, id, domain.Event{Type: domain.EventLinked, Reason: req.Reason,
				Data: mustJSON(map[string]any{"links": linkSummary(added)})}); err != nil {
				return err
			}
		}
		closed, err := h.closeContests(ctx, tx, id, "resolved")
		if err != nil {
			return err
		}
		res.Event, err = h.appendEvent(ctx, tx, id, domain.Event{Type: domain.EventUpdated, FromStatus: c.Status, ToStatus: c.Status,
			Reason: req.Reason, Policy: policies.Gate.Package(), PolicyHash: gate.Policy.Hash, Decision: mustJSON(gatekeep.Record(gate)),
			Data: mustJSON(map[string]any{"change": "resolved", "contests_closed": closed, "allow_local_policy": req.AllowLocalPolicy})})
		return err
	})
	if err != nil {
		return ChangeResult{Gate: gateIfDenied(err, gate)}, classify(conflict(err), "resolve "+id)
	}
	res.Gate = &gate
	res.Card, err = h.ShowCard(ctx, id)
	return res, err
}

// linkNew validates refs and inserts the links the card does not have yet
// (one role per piece of evidence), returning those added.
func (h *Host) linkNew(ctx context.Context, tx *store.Tx, id string, refs []roleRefs) ([]domain.Link, error) {
	newLinks, err := h.checkRefs(ctx, tx, id, refs)
	if err != nil {
		return nil, err
	}
	if err := h.checkOneRole(ctx, tx, id, newLinks); err != nil {
		return nil, err
	}
	var added []domain.Link
	for _, l := range newLinks {
		ok, err := tx.InsertLink(ctx, l)
		if err != nil {
			return nil, err
		}
		if ok {
			added = append(added, l)
		}
	}
	return added, nil
}

// checkOneRole refuses links that would give a piece of evidence (or a
// duplicate of it) a second role on the card, among the card's links and
// among the new ones.
func (h *Host) checkOneRole(ctx context.Context, tx *store.Tx, id string, newLinks []domain.Link) error {
	existing, err := tx.Links(ctx, id)
	if err != nil {
		return err
	}
	role := map[string]domain.Role{}
	for _, l := range existing {
		if _, ok := role[l.Original]; !ok {
			role[l.Original] = l.Role
		}
	}
	for _, l := range newLinks {
		orig, err := tx.OriginalOf(ctx, l.EvidenceID)
		if err != nil {
			return err
		}
		if r, ok := role[orig]; ok && r != l.Role {
			same := ""
			if orig != l.EvidenceID {
				same = fmt.Sprintf(" (as %s, whose content it repeats)", orig)
			}
			return invalid(string(l.Role), "evidence %s is linked to card %s as %s already%s: a piece of evidence has one role per card; record the %s as evidence of its own", l.EvidenceID, id, r, same, l.Role)
		}
		role[orig] = l.Role
	}
	return nil
}

// readAnchorIDs are the anchors a listing reads: the chain visible from
// here by default, one kind of it, or — only with allRepos — every anchor
// of the palace ("all", or no anchor named).
func (h *Host) readAnchorIDs(kind string, allRepos bool) ([]string, error) {
	switch kind {
	case "":
		if allRepos {
			return nil, nil
		}
		return h.chainIDs(), nil
	case "all":
		if !allRepos {
			return nil, invalid("anchor", "anchor all reads every repository's memory: ask for it explicitly with --all-repos")
		}
		return nil, nil
	}
	k, err := h.resolveAnchorKind("anchor", kind)
	if err != nil {
		return nil, err
	}
	return []string{AnchorID(h.loc.Identity(k))}, nil
}
