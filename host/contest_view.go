package host

import (
	"context"

	"github.com/palacehq/palace/store"
)

// ContestsOf returns the open contests of cards, keyed by card id, for
// surfaces that mark contested cards (hover, diagnostics). A failure is
// KindInternal.
func (h *Host) ContestsOf(ctx context.Context, ids []string) (map[string][]store.Contest, error) {
	return h.openContests(ctx, ids)
}
