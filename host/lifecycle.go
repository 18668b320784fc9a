package host

import (
	"context"
	"errors"
	"strings"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/authority"
	"github.com/palacehq/palace/host/gatekeep"
	"github.com/palacehq/palace/host/teamsync"
	"github.com/palacehq/palace/internal/hosterr"
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
func (h *Host) Gate(ctx context.Context, id string, req GateRequest) (gatekeep.Result, error) {
	c, err := h.store.Card(ctx, id)
	if err != nil {
		return gatekeep.Result{}, gatekeep.NotFound(err, "card", id)
	}
	if !req.AllRepos {
		if err := h.foreignCard(ctx, c, "read"); err != nil {
			return gatekeep.Result{}, err
		}
	} else if err := h.crossRepoRead(ctx); err != nil {
		return gatekeep.Result{}, err
	}
	links, err := h.store.Links(ctx, id)
	if err != nil {
		return gatekeep.Result{}, internal(err, "read links of %s", id)
	}
	target, err := gatekeep.PromoteTarget(c, req.Target)
	if err != nil {
		return gatekeep.Result{}, err
	}
	open, err := h.openContests(ctx, []string{id})
	if err != nil {
		return gatekeep.Result{}, err
	}
	return h.evaluateGate(ctx, c, links, open[id], string(domain.ActionPromote), string(target), req.Reviewer, req.AllowLocalPolicy), nil
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
	Card  Card             `json:"card"`
	Event domain.Event     `json:"event"`
	Gate  *gatekeep.Result `json:"gate,omitempty"`
	// Export is the card file written after the change, when the checkout
	// asks for it (AutoExportConfig).
	Export *teamsync.ExportNote `json:"export,omitempty"`
}

// Promote appends the verification refs, asks the gate and moves the
// card, all in one transaction. A denial (KindDenied, with the gate's
// reasons) leaves status, links and events exactly as they were.
func (h *Host) Promote(ctx context.Context, id string, req PromoteRequest) (ChangeResult, error) {
	if err := h.humanChange(string(domain.ActionPromote), req.Reason, "say why this card is ready", "", nil, ""); err != nil {
		return ChangeResult{}, err
	}
	return h.change(ctx, authority.Change{Op: authority.OpPromote, CardID: id, Target: req.Target, Reason: req.Reason,
		Reviewer: req.Reviewer, AllowLocalPolicy: req.AllowLocalPolicy,
		Refs: []authority.Refs{{Role: domain.RoleVerification, IDs: req.Verification}}})
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
	if err := h.humanChange(string(domain.ActionDemote), req.Reason, "say what the counterexample shows",
		"counterexample", req.Counterexample, "record what contradicts the card first"); err != nil {
		return ChangeResult{}, err
	}
	return h.change(ctx, authority.Change{Op: authority.OpDemote, CardID: id, Target: req.Target, Reason: req.Reason,
		Refs: []authority.Refs{{Role: domain.RoleCounterexample, IDs: req.Counterexample}}})
}

// Retire ends a card's active life. Human mode only; a reason is required.
func (h *Host) Retire(ctx context.Context, id, reason string) (ChangeResult, error) {
	if err := h.humanChange(string(domain.ActionRetire), reason, "say why the card is retired", "", nil, ""); err != nil {
		return ChangeResult{}, err
	}
	return h.change(ctx, authority.Change{Op: authority.OpRetire, CardID: id, Reason: reason})
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
	Export *teamsync.ExportNote `json:"export,omitempty"`
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
	o, err := h.apply(ctx, authority.Change{Op: authority.OpLink, CardID: id, Note: req.Note,
		Refs: []authority.Refs{{Role: domain.Role(req.Role), IDs: []string{req.EvidenceID}}}})
	if err != nil {
		return LinkResult{}, err
	}
	var res LinkResult
	if res.Added = len(o.Added) > 0; res.Added {
		res.Event, res.Contest = &o.Events[0], o.Contest
		res.Export = h.autoExport(ctx, id)
	}
	res.Card, err = h.ShowCard(ctx, id)
	return res, err
}

// apply runs one change through the door in a transaction. On failure the
// outcome holds only the gate's answer to a denial.
func (h *Host) apply(ctx context.Context, ch authority.Change) (authority.Outcome, error) {
	var o authority.Outcome
	err := h.store.Tx(ctx, func(tx *store.Tx) error {
		var err error
		o, err = h.door().Apply(ctx, tx, ch)
		return err
	})
	if err != nil {
		var denied authority.Outcome
		if KindOf(err) == KindDenied {
			denied.Gate = o.Gate
		}
		return denied, hosterr.Classify(conflict(err), string(ch.Op)+" "+ch.CardID)
	}
	return o, nil
}

// change applies ch and returns the card as it is afterwards, with the
// gate's answer when the gate decided (on a denial too).
func (h *Host) change(ctx context.Context, ch authority.Change) (ChangeResult, error) {
	o, err := h.apply(ctx, ch)
	if err != nil {
		return ChangeResult{Gate: o.Gate}, err
	}
	res := ChangeResult{Event: o.Event, Gate: o.Gate, Export: h.autoExport(ctx, ch.CardID)}
	res.Card, err = h.ShowCard(ctx, ch.CardID)
	return res, err
}

// door is the one way this palace's cards change (see package authority).
func (h *Host) door() *authority.Door { return authority.New(h.gatekeeper(), h.ensureAnchor) }

// conflict turns a concurrent change into a clear invalid-input error.
func conflict(err error) error {
	if errors.Is(err, store.ErrConflict) {
		return &Error{Kind: KindInvalid, Field: "id", Msg: "the card changed while this ran (another process moved it): look at `palace card show` and retry", Err: err}
	}
	return err
}

// humanChange checks, before anything is read, human mode, a reason and,
// when refsField is set, at least one evidence ref of that role.
func (h *Host) humanChange(op, reason, why, refsField string, refs []string, refsWhy string) error {
	if err := h.gatekeeper().RequireHuman(op); err != nil {
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
