package host

import (
	"context"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/authority"
	"github.com/palacehq/palace/host/cardview"
	"github.com/palacehq/palace/store"
)

// foreignCard refuses, for op, a card anchored outside this location's
// chain; reading one needs allRepos, changing one is never allowed.
func (h *Host) foreignCard(ctx context.Context, c domain.Card, op string) error {
	if h.loc.KindOf(c.AnchorID) != "" {
		return nil
	}
	ref := h.anchorRef(ctx, c.AnchorID)
	where := cardview.DisplayIdentity(ref)
	if op == "read" {
		return invalid("id", "card %s is anchored to %s %s, not to this checkout: reading another repository's cards needs --all-repos", c.ID, ref.Kind, where)
	}
	return invalid("id", "card %s is anchored to %s %s, not to this checkout: %s it from a checkout of that repository", c.ID, ref.Kind, where, op)
}

// ContestRequest says why a card is contested.
type ContestRequest struct {
	// Kind is counterexample, contradiction, witness_superseded or another
	// short word naming what contradicts the card. Required.
	Kind string `json:"kind"`
	// Reason says what contradicts it. Required.
	Reason string `json:"reason"`
	// EvidenceID is the contradicting evidence, visible from here; required.
	EvidenceID string `json:"evidence_id,omitempty"`
	// Source names what raised the contest (a signal id, a feature).
	Source string `json:"source,omitempty"`
}

// ContestResult reports MarkContested. Contested is false when the card is
// not authoritative or the same contest is open.
type ContestResult struct {
	Card      Card          `json:"card"`
	Contested bool          `json:"contested"`
	Event     *domain.Event `json:"event,omitempty"`
}

// MarkContested contests an authoritative card on visible evidence (none is
// KindInvalid): it keeps its status but leaves the inline lanes until a
// human demotes it or resolves the contest. Both modes.
func (h *Host) MarkContested(ctx context.Context, id string, req ContestRequest) (ContestResult, error) {
	o, err := h.apply(ctx, authority.Change{Op: authority.OpContest, CardID: id,
		Contest: authority.Contest{Kind: req.Kind, Reason: req.Reason, EvidenceID: req.EvidenceID, Source: req.Source}})
	if err != nil {
		return ContestResult{}, err
	}
	res := ContestResult{Contested: o.Contest != nil, Event: o.Contest}
	res.Card, err = h.ShowCard(ctx, id)
	return res, err
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

// Resolve answers a contest with newer verification through the gate's
// resolve action; on allow the card's contests close (a demoted card may be
// resolved too). Human mode only; a denial leaves everything as it was.
func (h *Host) Resolve(ctx context.Context, id string, req ResolveRequest) (ChangeResult, error) {
	if err := h.humanChange(string(domain.ActionResolve), req.Reason, "say what the newer verification shows",
		"verification", req.Verification, "record what verifies the card again first"); err != nil {
		return ChangeResult{}, err
	}
	return h.change(ctx, authority.Change{Op: authority.OpResolve, CardID: id, Reason: req.Reason, Reviewer: req.Reviewer,
		AllowLocalPolicy: req.AllowLocalPolicy, Refs: []authority.Refs{{Role: domain.RoleVerification, IDs: req.Verification}}})
}

// readAnchorIDs are the anchors a listing reads: the visible chain by
// default, one kind of it, or, only with allRepos, every anchor ("all" or
// none named).
func (h *Host) readAnchorIDs(kind string, allRepos bool) ([]string, error) {
	switch kind {
	case "":
		if allRepos {
			return nil, nil
		}
		return h.loc.ChainIDs(), nil
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
