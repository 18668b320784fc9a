package host

import (
	"cmp"
	"context"
	"encoding/json"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/gatekeep"
	"github.com/palacehq/palace/host/internal/hosterr"
	"github.com/palacehq/palace/store"
)

type roleRefs struct {
	role domain.Role
	ids  []string
}

// distillRefs are the evidence refs of a distill request by role.
func distillRefs(r DistillRequest) []roleRefs {
	return []roleRefs{
		{domain.RoleSupporting, r.Supporting},
		{domain.RoleVerification, r.Verification},
		{domain.RoleTeaching, r.Teaching},
		{domain.RoleCounterexample, r.Counterexample},
	}
}

// Distill creates a card from evidence refs: a candidate, or with Direct an
// authoritative card written without the gate. The card, its links and its
// event commit in one transaction.
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
	if req.Direct {
		if err := gatekeep.SecretFloor(c.Statement + "\n" + c.Content); err != nil {
			return Card{}, err
		}
	} else if err := refuseSecrets("statement and content", c.Statement+"\n"+c.Content); err != nil {
		return Card{}, err
	}
	var links []domain.Link
	err = h.store.Tx(ctx, func(tx *store.Tx) error {
		a, err := h.ensureAnchor(ctx, tx, kind)
		if err != nil {
			return err
		}
		c.AnchorID = a.ID
		if first, dup, err := tx.CardByStatement(ctx, a.ID, c.StatementNorm, domain.LiveStatuses()); err != nil {
			return err
		} else if dup {
			return invalid("statement", "a %s card with the same statement exists at this anchor: %s (%q); link more evidence to it instead", first.Status, first.ID, first.Statement)
		}
		if links, err = h.checkRefs(ctx, tx, c.ID, distillRefs(req)); err != nil {
			return err
		}
		if err := h.checkOneRole(ctx, tx, c.ID, links); err != nil {
			return err
		}
		if err := tx.InsertCard(ctx, c); err != nil {
			return err
		}
		for _, l := range links {
			if _, err := tx.InsertLink(ctx, l); err != nil {
				return err
			}
		}
		ev := domain.Event{Type: domain.EventCreated, ToStatus: c.Status, Reason: req.Reason}
		if req.Direct {
			ev.Type = "direct_write"
			ev.Reason = firstNonEmpty(req.Reason, "direct write by "+h.actor+", gate bypassed")
		}
		ev.Data = mustJSON(map[string]any{"links": linkSummary(links)})
		if _, err = h.appendEvent(ctx, tx, c.ID, ev); err != nil {
			return err
		}
		// A card written authoritative over a counterexample starts contested.
		for _, l := range links {
			if l.Role == domain.RoleCounterexample {
				if _, err := h.contest(ctx, tx, c, ContestRequest{Kind: ContestCounterexample,
					Reason: "written authoritative over counterexample " + l.EvidenceID, EvidenceID: l.EvidenceID}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return Card{}, classify(err, "distill")
	}
	return h.ShowCard(ctx, c.ID)
}

// checkRefs validates evidence refs: each must exist, be evidence (not a
// card), and be visible from here (no citing another repository's evidence).
func (h *Host) checkRefs(ctx context.Context, tx *store.Tx, cardID string, refs []roleRefs) ([]domain.Link, error) {
	var ids []string
	for _, r := range refs {
		ids = append(ids, r.ids...)
	}
	found, err := tx.EvidenceByIDs(ctx, ids)
	if err != nil {
		return nil, err
	}
	now := h.stamp()
	var links []domain.Link
	for _, r := range refs {
		for _, id := range r.ids {
			e, ok := found[id]
			if !ok {
				isCard, err := tx.CardIDExists(ctx, id)
				if err != nil {
					return nil, err
				}
				if isCard {
					return nil, invalid(string(r.role), "--%s %s is a card: links point at evidence only; cite the evidence behind that card", r.role, id)
				}
				return nil, invalid(string(r.role), "--%s %s: no such evidence; record it first with `palace record`", r.role, id)
			}
			if h.visibleKind(e.AnchorID) == "" {
				return nil, invalid(string(r.role), "--%s %s belongs to another repository or worktree: evidence is cited only where it was recorded (or from an outer anchor)", r.role, id)
			}
			links = append(links, domain.Link{CardID: cardID, EvidenceID: id, Role: r.role, CreatedAt: now, SourceRef: e.SourceRef})
		}
	}
	return links, nil
}

func (h *Host) appendEvent(ctx context.Context, tx *store.Tx, cardID string, e domain.Event) (domain.Event, error) {
	return tx.AppendEvent(ctx, h.gatekeeper().NewEvent(cardID, e))
}

func linkSummary(links []domain.Link) []map[string]string { return gatekeep.LinkSummary(links) }

func mustJSON(v any) json.RawMessage { return gatekeep.EventData(v) }

func firstNonEmpty(vals ...string) string { return cmp.Or(vals...) }

// classify passes host errors through and wraps anything else as internal.
func classify(err error, op string) error { return hosterr.Classify(err, op) }
