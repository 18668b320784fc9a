package host

import (
	"cmp"
	"context"
	"slices"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/authority"
	"github.com/palacehq/palace/host/gatekeep"
	"github.com/palacehq/palace/host/intake"
	"github.com/palacehq/palace/internal/hosterr"
	"github.com/palacehq/palace/store"
)

// distillRefs are the evidence refs of a distill request by role.
func distillRefs(r intake.DistillRequest) []authority.Refs {
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
func (h *Host) Distill(ctx context.Context, req intake.DistillRequest) (Card, error) {
	if req.Direct {
		if err := h.gatekeeper().RequireHuman("distill --direct"); err != nil {
			return Card{}, err
		}
	}
	if req.From != "" {
		var err error
		if req, err = h.fromCard(ctx, req); err != nil {
			return Card{}, err
		}
	}
	c, kind, err := h.Intake().PrepareCard(req)
	if err != nil {
		return Card{}, err
	}
	if !req.Direct {
		if err := intake.RefuseSecrets("statement and content", c.Statement+"\n"+c.Content); err != nil {
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
		_, err = h.door().Apply(ctx, tx, authority.Change{Op: op, CardID: c.ID, Card: &c, Refs: distillRefs(req), Reason: req.Reason, Supersedes: req.From})
		return err
	})
	if err != nil {
		return Card{}, hosterr.Classify(err, "distill")
	}
	out, err := h.ShowCard(ctx, c.ID)
	if err != nil {
		return Card{}, err
	}
	if out.NearDuplicates, err = h.nearDuplicatesAt(ctx, c.AnchorID, c.Statement, c.ID, req.From); err != nil {
		return Card{}, err
	}
	return out, nil
}

// nearDuplicatesAt returns up to five live cards at anchorID, not in skip,
// whose statement nearly repeats statement, most similar first.
func (h *Host) nearDuplicatesAt(ctx context.Context, anchorID, statement string, skip ...string) ([]Neighbour, error) {
	x, err := h.nearIndexAt(ctx, anchorID, nil)
	if err != nil {
		return nil, err
	}
	near := x.near(statement, func(id string) bool { return slices.Contains(skip, id) })
	if len(near) == 0 {
		return nil, nil
	}
	ids := make([]string, len(near))
	for i, n := range near {
		ids[i] = n.ID
	}
	cards, err := h.store.CardsByIDs(ctx, ids)
	if err != nil {
		return nil, internal(err, "read near-duplicates")
	}
	out := make([]Neighbour, len(near))
	for i, n := range near {
		c := cards[n.ID]
		out[i] = Neighbour{ID: n.ID, Statement: n.Statement, Tier: c.Tier, Status: c.Status, Anchor: h.anchorRef(ctx, c.AnchorID), Exact: n.Exact, Similarity: n.Similarity}
	}
	return out, nil
}

// fromCard fills what req leaves empty from the card it supersedes and adds
// that card's evidence in its roles. The card must be of this checkout and
// the new one must differ in tier or statement.
func (h *Host) fromCard(ctx context.Context, req intake.DistillRequest) (intake.DistillRequest, error) {
	old, err := h.store.Card(ctx, req.From)
	if err != nil {
		return req, gatekeep.NotFound(err, "card", req.From)
	}
	kind := h.loc.KindOf(old.AnchorID)
	if kind == "" {
		if err := h.foreignCard(ctx, old, "supersede"); err != nil {
			return req, err
		}
	}
	links, err := h.store.Links(ctx, old.ID)
	if err != nil {
		return req, internal(err, "read card %s", old.ID)
	}
	req.Statement = cmp.Or(req.Statement, old.Statement)
	req.Content = cmp.Or(req.Content, old.Content)
	req.Field = cmp.Or(req.Field, old.Field)
	req.Persistence = cmp.Or(req.Persistence, string(old.Persistence))
	req.RenderPref = cmp.Or(req.RenderPref, string(old.RenderPref))
	if len(req.Scope.Paths)+len(req.Scope.Languages)+len(req.Scope.Fields) == 0 {
		req.Scope = old.Scope
	}
	if len(req.Trigger.Patterns)+len(req.Trigger.Intents)+len(req.Trigger.ToolNeeds) == 0 {
		req.Trigger = old.Trigger
	}
	// dao_tian lives at the global anchor unless told otherwise; any other
	// tier stays where the card it replaces was learned, in its domain.
	if req.Anchor == "" && req.Tier != string(domain.TierDaoTian) {
		req.Anchor = string(kind)
		req.Domain = cmp.Or(req.Domain, string(old.Domain))
	}
	byRole := map[domain.Role]*[]string{domain.RoleSupporting: &req.Supporting, domain.RoleVerification: &req.Verification,
		domain.RoleTeaching: &req.Teaching, domain.RoleCounterexample: &req.Counterexample}
	for _, l := range links {
		if ids := byRole[l.Role]; ids != nil && !slices.Contains(*ids, l.EvidenceID) {
			*ids = append(*ids, l.EvidenceID)
		}
	}
	if req.Tier == string(old.Tier) && domain.NormalizeStatement(req.Statement) == old.StatementNorm {
		return req, invalid("from", "the card would repeat %s (%s, same statement): pass the new --tier, or a new --statement, for the card that replaces it", old.ID, old.Tier)
	}
	return req, nil
}
