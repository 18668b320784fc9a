package host

import (
	"context"
	"fmt"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/gatekeep"
	"github.com/palacehq/palace/store"
)

// The gate and its floors are package gatekeep's; host names its result
// under the old name and lends it the store, the workspace, the mode and
// the policy set.

// GateResult is the gate's answer plus which policy gave it.
type GateResult = gatekeep.Result

func (h *Host) gatekeeper() *gatekeep.Keeper {
	return &gatekeep.Keeper{Store: h.store, Loc: h.loc, Mode: string(h.mode), Actor: h.actor, Now: h.now, Policies: h.Policies}
}

// evaluateGate runs the policy and then the Go floors, with the reviewer
// named by the request (see gatekeep.Keeper.Reviewer).
func (h *Host) evaluateGate(ctx context.Context, c domain.Card, links []domain.Link, contests []store.Contest, action, target, reviewerName string, allowLocal bool) GateResult {
	k := h.gatekeeper()
	return k.Evaluate(ctx, c, links, contests, action, target, k.Reviewer(reviewerName), allowLocal)
}

// gateIn reads c's links and open contests in tx and asks the gate about
// action (promote or publish) to target; a denial is KindDenied with the
// gate's reasons, and the result is returned either way.
func (h *Host) gateIn(ctx context.Context, tx *store.Tx, c domain.Card, action, target, reviewer string, allowLocal bool) ([]domain.Link, GateResult, error) {
	links, err := tx.Links(ctx, c.ID)
	if err != nil {
		return nil, GateResult{}, err
	}
	open, err := tx.OpenContests(ctx, []string{c.ID})
	if err != nil {
		return nil, GateResult{}, err
	}
	g := h.evaluateGate(ctx, c, links, open[c.ID], action, target, reviewer, allowLocal)
	if !g.Allow {
		verb := map[string]string{"promote": "promoting", "publish": "publishing"}[action]
		return links, g, denied(fmt.Sprintf("gate denied %s %s to %s", verb, c.ID, target), g.Reasons)
	}
	return links, g, nil
}
