package host

import (
	"cmp"
	"context"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/authority"
	"github.com/palacehq/palace/host/internal/hosterr"
	"github.com/palacehq/palace/store"
)

// distillRefs are the evidence refs of a distill request by role.
func distillRefs(r DistillRequest) []authority.Refs {
	return []authority.Refs{
		{Role: domain.RoleSupporting, IDs: r.Supporting},
		{Role: domain.RoleVerification, IDs: r.Verification},
		{Role: domain.RoleTeaching, IDs: r.Teaching},
		{Role: domain.RoleCounterexample, IDs: r.Counterexample},
	}
}

// Distill creates a card from evidence refs: a candidate, or with Direct an
// authoritative card written without the gate (a person's decision). The
// card, its links and its event commit in one transaction.
func (h *Host) Distill(ctx context.Context, req DistillRequest) (Card, error) {
	if req.Direct {
		if err := h.requireHuman("distill --direct"); err != nil {
			return Card{}, err
		}
	}
	c, kind, err := h.intake().PrepareCard(req)
	if err != nil {
		return Card{}, err
	}
	if !req.Direct {
		if err := refuseSecrets("statement and content", c.Statement+"\n"+c.Content); err != nil {
			return Card{}, err
		}
	}
	op := authority.OpCreate
	if req.Direct {
		op = authority.OpDirect
	}
	err = h.store.Tx(ctx, func(tx *store.Tx) error {
		a, err := h.ensureAnchor(ctx, tx, kind)
		if err != nil {
			return err
		}
		c.AnchorID = a.ID
		_, err = h.door().Apply(ctx, tx, authority.Change{Op: op, CardID: c.ID, Card: &c, Refs: distillRefs(req), Reason: req.Reason})
		return err
	})
	if err != nil {
		return Card{}, classify(err, "distill")
	}
	return h.ShowCard(ctx, c.ID)
}

func firstNonEmpty(vals ...string) string { return cmp.Or(vals...) }

// classify passes host errors through and wraps anything else as internal.
func classify(err error, op string) error { return hosterr.Classify(err, op) }
