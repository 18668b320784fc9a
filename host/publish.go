package host

import (
	"context"
	"strings"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/gatekeep"
	"github.com/palacehq/palace/store"
)

// PublishRequest copies a card one anchor outward.
type PublishRequest struct {
	// To is repo (from a worktree card) or global (from a repo card).
	To       string `json:"to"`
	Reason   string `json:"reason"`
	Reviewer string `json:"reviewer,omitempty"`
	// AllowLocalPolicy lets a repo gate policy that git does not track as
	// committed decide; the events record it.
	AllowLocalPolicy bool `json:"allow_local_policy,omitempty"`
}

// PublishResult reports the original (now stamped published_to) and its copy.
type PublishResult struct {
	Original Card        `json:"original"`
	Copy     Card        `json:"copy"`
	Gate     *GateResult `json:"gate,omitempty"`
	// Export is the copy's card file, written when the copy is this
	// repository's and the checkout asks for it (AutoExportConfig).
	Export *ExportNote `json:"export,omitempty"`
}

// Publish copies an authoritative card one step outward (worktree → repo →
// global) with origin_card and the same links; the original stays and is
// stamped published_to. The gate's publish action decides; the secret floor
// applies. Human mode only; one transaction.
func (h *Host) Publish(ctx context.Context, id string, req PublishRequest) (PublishResult, error) {
	if err := h.humanChange("publish", req.Reason, "say why the card holds beyond its anchor", "", nil, ""); err != nil {
		return PublishResult{}, err
	}
	to := domain.AnchorKind(req.To)
	if to != domain.AnchorRepo && to != domain.AnchorGlobal {
		return PublishResult{}, invalid("to", "--to %q is not valid: use repo or global", req.To)
	}
	var copyID string
	var gate GateResult
	err := h.store.Tx(ctx, func(tx *store.Tx) error {
		c, err := h.cardIn(ctx, tx, id, "publish")
		if err != nil {
			return err
		}
		from := h.visibleKind(c.AnchorID)
		if want := outward(from); want != to {
			if want == "" {
				return invalid("to", "card %s is global already: there is nothing outward of global", id)
			}
			return invalid("to", "publish moves one step at a time: card %s is at the %s anchor, so the next step is --to %s", id, from, want)
		}
		if !c.Status.Authoritative() {
			return invalid("id", "card %s is %s: only authoritative cards (%s) are published; promote it first", id, c.Status, strings.Join(domain.Strings(domain.AuthoritativeStatuses()), ", "))
		}
		if c.PublishedTo != "" {
			return invalid("id", "card %s was published already, as %s", id, c.PublishedTo)
		}
		var links []domain.Link
		if links, gate, err = h.gateIn(ctx, tx, c, "publish", string(to), req.Reviewer, req.AllowLocalPolicy); err != nil {
			return err
		}
		target, err := h.ensureAnchor(ctx, tx, to)
		if err != nil {
			return err
		}
		if first, dup, err := tx.CardByStatement(ctx, target.ID, c.StatementNorm, domain.LiveStatuses()); err != nil {
			return err
		} else if dup {
			return invalid("id", "the %s anchor already holds a %s card with this statement: %s", to, first.Status, first.ID)
		}
		now := h.now()
		cp := c
		cp.ID = store.NewID(store.CardPrefix, now)
		cp.AnchorID = target.ID
		cp.OriginCard = c.ID
		cp.PublishedTo = ""
		if to == domain.AnchorGlobal {
			// The global anchor holds domain global only.
			cp.Domain = "global"
		}
		cp.CreatedBy = h.actor
		cp.CreatedAt, cp.UpdatedAt = store.FormatTime(now), store.FormatTime(now)
		if err := tx.InsertCard(ctx, cp); err != nil {
			return err
		}
		for _, l := range links {
			l.CardID, l.CreatedAt = cp.ID, cp.CreatedAt
			if _, err := tx.InsertLink(ctx, l); err != nil {
				return err
			}
		}
		if err := tx.SetPublishedTo(ctx, c.ID, cp.ID, cp.CreatedAt); err != nil {
			return err
		}
		decision := mustJSON(gatekeep.Record(gate))
		if _, err := h.appendEvent(ctx, tx, cp.ID, domain.Event{Type: domain.EventCreated, ToStatus: cp.Status, Reason: req.Reason,
			Policy: "palace.gate", PolicyHash: gate.Policy.Hash, Decision: decision,
			Data: mustJSON(map[string]any{"origin_card": c.ID, "links": linkSummary(links)})}); err != nil {
			return err
		}
		if _, err := h.appendEvent(ctx, tx, c.ID, domain.Event{Type: domain.EventPublished, FromStatus: c.Status, ToStatus: c.Status,
			Reason: req.Reason, Policy: "palace.gate", PolicyHash: gate.Policy.Hash, Decision: decision,
			Data: mustJSON(map[string]any{"copy": cp.ID, "to": string(to)})}); err != nil {
			return err
		}
		copyID = cp.ID
		return nil
	})
	if err != nil {
		return PublishResult{Gate: gateIfDenied(err, gate)}, classify(conflict(err), "publish "+id)
	}
	orig, err := h.ShowCard(ctx, id)
	if err != nil {
		return PublishResult{}, err
	}
	cp, err := h.ShowCard(ctx, copyID)
	return PublishResult{Original: orig, Copy: cp, Gate: &gate, Export: h.autoExport(ctx, copyID)}, err
}

// outward is the next anchor kind out from k, "" for global.
func outward(k domain.AnchorKind) domain.AnchorKind {
	switch k {
	case domain.AnchorWorktree:
		return domain.AnchorRepo
	case domain.AnchorRepo:
		return domain.AnchorGlobal
	}
	return ""
}

func gateIfDenied(err error, g GateResult) *GateResult {
	if KindOf(err) == KindDenied {
		return &g
	}
	return nil
}
