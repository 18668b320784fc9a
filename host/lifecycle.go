package host

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/gatekeep"
	"github.com/palacehq/palace/policies"
	"github.com/palacehq/palace/store"
)

// GateRequest asks whether a card may move to Target.
type GateRequest struct {
	// Target is promoted or canonical. Defaults to canonical for dao_tian and
	// promoted otherwise.
	Target string `json:"target,omitempty"`
	// Reviewer names the reviewer. In human mode it defaults to the OS user
	// (a human); in agent mode the reviewer is always the agent.
	Reviewer string `json:"reviewer,omitempty"`
	// AllowLocalPolicy lets a repo gate policy that git does not track as
	// committed (untracked or modified) decide.
	AllowLocalPolicy bool `json:"allow_local_policy,omitempty"`
	// AllRepos allows asking about a card of another repository (read-only).
	AllRepos bool `json:"all_repos,omitempty"`
}

// Gate evaluates palace.gate for promoting card id, then the floors no policy
// can lift. It writes nothing.
func (h *Host) Gate(ctx context.Context, id string, req GateRequest) (GateResult, error) {
	c, err := h.store.Card(ctx, id)
	if err != nil {
		return GateResult{}, notFound(err, "card", id)
	}
	if !req.AllRepos {
		if err := h.foreignCard(ctx, c, "read"); err != nil {
			return GateResult{}, err
		}
	}
	links, err := h.store.Links(ctx, id)
	if err != nil {
		return GateResult{}, internal(err, "read links of %s", id)
	}
	target, err := gatekeep.PromoteTarget(c, req.Target)
	if err != nil {
		return GateResult{}, err
	}
	open, err := h.openContests(ctx, []string{id})
	if err != nil {
		return GateResult{}, err
	}
	return h.evaluateGate(ctx, c, links, open[id], "promote", string(target), req.Reviewer, req.AllowLocalPolicy), nil
}

// PromoteRequest promotes a card through the gate.
type PromoteRequest struct {
	Reason   string `json:"reason"`
	Target   string `json:"target,omitempty"`
	Reviewer string `json:"reviewer,omitempty"`
	// Verification refs are linked first, in the same transaction.
	Verification []string `json:"verification,omitempty"`
	// AllowLocalPolicy lets a repo gate policy that git does not track as
	// committed decide; the event records it.
	AllowLocalPolicy bool `json:"allow_local_policy,omitempty"`
}

// ChangeResult reports a lifecycle change.
type ChangeResult struct {
	Card  Card         `json:"card"`
	Event domain.Event `json:"event"`
	Gate  *GateResult  `json:"gate,omitempty"`
	// Export is the card file written after the change, when the checkout
	// asks for it (AutoExportConfig).
	Export *ExportNote `json:"export,omitempty"`
}

// Promote appends the verification refs, asks the gate, checks the floors
// and moves the card, all in one transaction. A denial (KindDenied, with the
// gate's reasons) leaves status, links and events exactly as they were.
func (h *Host) Promote(ctx context.Context, id string, req PromoteRequest) (ChangeResult, error) {
	if err := h.humanChange("promote", req.Reason, "say why this card is ready", "", nil, ""); err != nil {
		return ChangeResult{}, err
	}
	var res ChangeResult
	var gate GateResult
	err := h.store.Tx(ctx, func(tx *store.Tx) error {
		c, err := h.cardIn(ctx, tx, id, "promote")
		if err != nil {
			return err
		}
		target, err := gatekeep.PromoteTarget(c, req.Target)
		if err != nil {
			return err
		}
		if !gatekeep.CanPromote(c.Status, target) {
			return invalid("target", "card %s is %s and cannot move to %s", id, c.Status, target)
		}
		added, err := h.linkNew(ctx, tx, id, []roleRefs{{domain.RoleVerification, req.Verification}})
		if err != nil {
			return err
		}
		if _, gate, err = h.gateIn(ctx, tx, c, "promote", string(target), req.Reviewer, req.AllowLocalPolicy); err != nil {
			return err
		}
		if len(added) > 0 {
			if _, err := h.appendEvent(ctx, tx, id, domain.Event{Type: domain.EventLinked, Reason: req.Reason,
				Data: mustJSON(map[string]any{"links": linkSummary(added)})}); err != nil {
				return err
			}
		}
		if err := tx.SetCardStatus(ctx, id, c.Status, target, h.stamp()); err != nil {
			return err
		}
		ev := domain.Event{
			Type: domain.EventPromoted, FromStatus: c.Status, ToStatus: target, Reason: req.Reason,
			Policy: policies.Gate.Package(), PolicyHash: gate.Policy.Hash,
			Decision: mustJSON(gatekeep.Record(gate)),
		}
		if gate.Policy.FileState != "" {
			ev.Data = mustJSON(map[string]any{"policy_file": gate.Policy.File, "policy_file_state": gate.Policy.FileState, "allow_local_policy": req.AllowLocalPolicy})
		}
		res.Event, err = h.appendEvent(ctx, tx, id, ev)
		return err
	})
	if err != nil {
		return ChangeResult{Gate: gateIfDenied(err, gate)}, classify(conflict(err), "promote "+id)
	}
	res.Gate = &gate
	res.Export = h.autoExport(ctx, id)
	res.Card, err = h.ShowCard(ctx, id)
	return res, err
}

// DemoteRequest weakens a card on counterexample evidence.
type DemoteRequest struct {
	Reason         string   `json:"reason"`
	Counterexample []string `json:"counterexample"`
	// Target is demoted (default) or retired.
	Target string `json:"target,omitempty"`
}

// Demote links the counterexample refs and moves the card to demoted or
// retired in one transaction. Human mode only; at least one counterexample.
func (h *Host) Demote(ctx context.Context, id string, req DemoteRequest) (ChangeResult, error) {
	if err := h.humanChange("demote", req.Reason, "say what the counterexample shows",
		"counterexample", req.Counterexample, "record what contradicts the card first"); err != nil {
		return ChangeResult{}, err
	}
	target := domain.Status(firstNonEmpty(req.Target, string(domain.StatusDemoted)))
	if target != domain.StatusDemoted && target != domain.StatusRetired {
		return ChangeResult{}, invalid("target", "--target %q is not valid for demote: use demoted or retired", target)
	}
	return h.change(ctx, id, "demote", func(ctx context.Context, tx *store.Tx, c domain.Card) (domain.Event, error) {
		if c.Status == domain.StatusRetired || c.Status == target {
			return domain.Event{}, invalid("id", "card %s is already %s", id, c.Status)
		}
		links, err := h.linkNew(ctx, tx, id, []roleRefs{{domain.RoleCounterexample, req.Counterexample}})
		if err != nil {
			return domain.Event{}, err
		}
		if err := tx.SetCardStatus(ctx, id, c.Status, target, h.stamp()); err != nil {
			return domain.Event{}, err
		}
		closed, err := h.closeContests(ctx, tx, id, string(target))
		if err != nil {
			return domain.Event{}, err
		}
		if err := h.supersedeCopies(ctx, tx, c, target, req.Reason); err != nil {
			return domain.Event{}, err
		}
		data := map[string]any{"links": linkSummary(links)}
		if closed > 0 {
			data["contests_closed"] = closed
		}
		return h.appendEvent(ctx, tx, id, domain.Event{Type: domain.EventType(target),
			FromStatus: c.Status, ToStatus: target, Reason: req.Reason,
			Data: mustJSON(data)})
	})
}

// Retire ends a card's active life. Human mode only; a reason is required.
func (h *Host) Retire(ctx context.Context, id, reason string) (ChangeResult, error) {
	if err := h.humanChange("retire", reason, "say why the card is retired", "", nil, ""); err != nil {
		return ChangeResult{}, err
	}
	return h.change(ctx, id, "retire", func(ctx context.Context, tx *store.Tx, c domain.Card) (domain.Event, error) {
		if c.Status == domain.StatusRetired {
			return domain.Event{}, invalid("id", "card %s is already retired", id)
		}
		if err := tx.SetCardStatus(ctx, id, c.Status, domain.StatusRetired, h.stamp()); err != nil {
			return domain.Event{}, err
		}
		if _, err := h.closeContests(ctx, tx, id, string(domain.StatusRetired)); err != nil {
			return domain.Event{}, err
		}
		if err := h.supersedeCopies(ctx, tx, c, domain.StatusRetired, reason); err != nil {
			return domain.Event{}, err
		}
		return h.appendEvent(ctx, tx, id, domain.Event{Type: domain.EventRetired, FromStatus: c.Status, ToStatus: domain.StatusRetired, Reason: reason})
	})
}

// LinkRequest adds one evidence link to a card.
type LinkRequest struct {
	Role       string `json:"role"`
	EvidenceID string `json:"evidence_id"`
	Note       string `json:"note,omitempty"`
}

// LinkResult reports Link; Added is false when the link existed already.
type LinkResult struct {
	Card  Card          `json:"card"`
	Added bool          `json:"added"`
	Event *domain.Event `json:"event,omitempty"`
	// Export is the card file written after the change (AutoExportConfig).
	Export *ExportNote `json:"export,omitempty"`
	// Contest is the event of the contest a counterexample opened on an
	// authoritative card.
	Contest *domain.Event `json:"contest,omitempty"`
}

// Link adds a role link (never changes status). Both modes.
func (h *Host) Link(ctx context.Context, id string, req LinkRequest) (LinkResult, error) {
	if err := oneOf("role", domain.Role(req.Role), domain.Roles); err != nil {
		return LinkResult{}, err
	}
	if req.EvidenceID == "" {
		return LinkResult{}, invalid("evidence", "--evidence is required: the evidence id to link")
	}
	var res LinkResult
	err := h.store.Tx(ctx, func(tx *store.Tx) error {
		c, err := h.cardIn(ctx, tx, id, "link")
		if err != nil {
			return err
		}
		links, err := h.checkRefs(ctx, tx, id, []roleRefs{{domain.Role(req.Role), []string{req.EvidenceID}}})
		if err != nil {
			return err
		}
		if err := h.checkOneRole(ctx, tx, id, links); err != nil {
			return err
		}
		links[0].Note = req.Note
		if res.Added, err = tx.InsertLink(ctx, links[0]); err != nil || !res.Added {
			return err
		}
		ev, err := h.appendEvent(ctx, tx, id, domain.Event{Type: domain.EventLinked, Reason: req.Note,
			Data: mustJSON(map[string]any{"links": linkSummary(links)})})
		res.Event = &ev
		if err != nil || req.Role != string(domain.RoleCounterexample) {
			return err
		}
		// A counterexample against an authoritative card contests it.
		reason := firstNonEmpty(req.Note, "counterexample "+req.EvidenceID+" linked")
		res.Contest, err = h.contest(ctx, tx, c, ContestRequest{Kind: ContestCounterexample, Reason: reason, EvidenceID: req.EvidenceID})
		return err
	})
	if err != nil {
		return LinkResult{}, classify(err, "link "+id)
	}
	if res.Added {
		res.Export = h.autoExport(ctx, id)
	}
	res.Card, err = h.ShowCard(ctx, id)
	return res, err
}

// change runs one status change of a card in a transaction and returns the
// card as it is afterwards.
func (h *Host) change(ctx context.Context, id, op string, fn func(context.Context, *store.Tx, domain.Card) (domain.Event, error)) (ChangeResult, error) {
	var res ChangeResult
	err := h.store.Tx(ctx, func(tx *store.Tx) error {
		c, err := h.cardIn(ctx, tx, id, op)
		if err != nil {
			return err
		}
		res.Event, err = fn(ctx, tx, c)
		return err
	})
	if err != nil {
		return ChangeResult{}, classify(conflict(err), op+" "+id)
	}
	res.Export = h.autoExport(ctx, id)
	res.Card, err = h.ShowCard(ctx, id)
	return res, err
}

// conflict turns a concurrent change into a clear invalid-input error.
func conflict(err error) error {
	if errors.Is(err, store.ErrConflict) {
		return &Error{Kind: KindInvalid, Field: "id", Msg: "the card changed while this ran (another process moved it): look at `palace card show` and retry", Err: err}
	}
	return err
}

func parseDate(s string) (time.Time, error) { return gatekeep.ParseDate(s) }

// normDate stores dates in the palace's one time format.
func normDate(s string) string { return gatekeep.NormDate(s) }

// humanChange checks what a human lifecycle change needs before it reads
// anything: human mode, a reason (why says what it should say) and, when
// refsField is set, at least one evidence ref of that role (refsWhy says
// what to record first).
func (h *Host) humanChange(op, reason, why, refsField string, refs []string, refsWhy string) error {
	if err := h.requireHuman(op); err != nil {
		return err
	}
	if strings.TrimSpace(reason) == "" {
		return invalid("reason", "--reason is required: %s", why)
	}
	if refsField != "" && len(refs) == 0 {
		return invalid(refsField, "at least one --%s evidence ref is required: %s", refsField, refsWhy)
	}
	return nil
}

// cardIn reads card id in tx for op, refusing an unknown id and a card
// anchored outside this checkout's chain.
func (h *Host) cardIn(ctx context.Context, tx *store.Tx, id, op string) (domain.Card, error) {
	c, err := tx.Card(ctx, id)
	if err != nil {
		return domain.Card{}, notFound(err, "card", id)
	}
	return c, h.foreignCard(ctx, c, op)
}
