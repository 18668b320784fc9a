package authority

import (
	"context"
	"fmt"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/internal/hosterr"
	"github.com/palacehq/palace/store"
)

// CheckRefs validates evidence refs for card cardID: each must exist, be
// evidence (not a card), and be visible from here (no citing another
// repository's evidence). It returns the links they make, not written.
func (d *Door) CheckRefs(ctx context.Context, tx *store.Tx, cardID string, refs []Refs) ([]domain.Link, error) {
	return d.checkRefs(ctx, tx, cardID, refs)
}

func (d *Door) checkRefs(ctx context.Context, tx *store.Tx, cardID string, refs []Refs) ([]domain.Link, error) {
	var ids []string
	for _, r := range refs {
		ids = append(ids, r.IDs...)
	}
	found, err := tx.EvidenceByIDs(ctx, ids)
	if err != nil {
		return nil, err
	}
	now := d.gate.Stamp()
	var links []domain.Link
	for _, r := range refs {
		for _, id := range r.IDs {
			e, ok := found[id]
			if !ok {
				isCard, err := tx.CardIDExists(ctx, id)
				if err != nil {
					return nil, err
				}
				if isCard {
					return nil, hosterr.Invalid(string(r.Role), "--%s %s is a card: links point at evidence only; cite the evidence behind that card", r.Role, id)
				}
				return nil, hosterr.Invalid(string(r.Role), "--%s %s: no such evidence; record it first with `palace record`", r.Role, id)
			}
			if d.loc.KindOf(e.AnchorID) == "" {
				return nil, hosterr.Invalid(string(r.Role), "--%s %s belongs to another repository or worktree: evidence is cited only where it was recorded (or from an outer anchor)", r.Role, id)
			}
			links = append(links, domain.Link{CardID: cardID, EvidenceID: id, Role: r.Role, CreatedAt: now, SourceRef: e.SourceRef})
		}
	}
	return links, nil
}

// checkOneRole refuses links that would give a piece of evidence (or a
// duplicate of it) a second role on the card, among the card's links and
// among the new ones.
func (d *Door) checkOneRole(ctx context.Context, tx *store.Tx, id string, newLinks []domain.Link) error {
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
			return hosterr.Invalid(string(l.Role), "evidence %s is linked to card %s as %s already%s: a piece of evidence has one role per card; record the %s as evidence of its own", l.EvidenceID, id, r, same, l.Role)
		}
		role[orig] = l.Role
	}
	return nil
}

// newLinks validates refs and returns the links the card does not have
// yet, not written.
func (d *Door) newLinks(ctx context.Context, tx *store.Tx, id string, refs []Refs) ([]domain.Link, error) {
	links, err := d.checkRefs(ctx, tx, id, refs)
	if err != nil {
		return nil, err
	}
	if err := d.checkOneRole(ctx, tx, id, links); err != nil {
		return nil, err
	}
	return d.unlinked(ctx, tx, id, links)
}

// unlinked keeps the links card id does not have yet (each once).
func (d *Door) unlinked(ctx context.Context, tx *store.Tx, id string, links []domain.Link) ([]domain.Link, error) {
	existing, err := tx.Links(ctx, id)
	if err != nil {
		return nil, err
	}
	type key struct {
		ev   string
		role domain.Role
	}
	have := map[key]bool{}
	for _, l := range existing {
		have[key{l.EvidenceID, l.Role}] = true
	}
	var out []domain.Link
	for _, l := range links {
		k := key{l.EvidenceID, l.Role}
		if !have[k] {
			have[k] = true
			out = append(out, l)
		}
	}
	return out, nil
}
