package host

import (
	"context"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/gatekeep"
	"github.com/palacehq/palace/store"
)

// The gate and its floors are package gatekeep's; host names its result
// under the old name and lends it the store, the workspace, the mode and
// the policy set.

func (h *Host) gatekeeper() *gatekeep.Keeper {
	return &gatekeep.Keeper{Store: h.store, Loc: h.loc, Mode: string(h.mode), Actor: h.actor, Now: h.now, Policies: h.Policies}
}

// evaluateGate runs the policy and then the Go floors, with the reviewer
// named by the request (see gatekeep.Keeper.Reviewer).
func (h *Host) evaluateGate(ctx context.Context, c domain.Card, links []domain.Link, contests []store.Contest, action, target, reviewerName string, allowLocal bool) gatekeep.Result {
	k := h.gatekeeper()
	return k.Evaluate(ctx, c, links, contests, action, target, k.Reviewer(reviewerName), allowLocal)
}
