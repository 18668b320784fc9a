package host

import (
	"context"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/authority"
	"github.com/palacehq/palace/host/gatekeep"
	"github.com/palacehq/palace/host/teamsync"
	"github.com/palacehq/palace/internal/hosterr"
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
	Original Card             `json:"original"`
	Copy     Card             `json:"copy"`
	Gate     *gatekeep.Result `json:"gate,omitempty"`
	// Export is the copy's card file, written when the copy is this
	// repository's and the checkout asks for it (AutoExportConfig).
	Export *teamsync.ExportNote `json:"export,omitempty"`
}

// Publish copies an authoritative card one anchor outward with origin_card
// and the same links, stamping the original published_to. The gate's
// publish action decides and the secret floor applies. Human mode only.
func (h *Host) Publish(ctx context.Context, id string, req PublishRequest) (PublishResult, error) {
	if err := h.humanChange(string(domain.ActionPublish), req.Reason, "say why the card holds beyond its anchor", "", nil, ""); err != nil {
		return PublishResult{}, err
	}
	var o authority.Outcome
	err := h.store.Tx(ctx, func(tx *store.Tx) error {
		var err error
		o, err = h.door().Apply(ctx, tx, authority.Change{Op: authority.OpPublish, CardID: id, Target: req.To, Reason: req.Reason,
			Reviewer: req.Reviewer, AllowLocalPolicy: req.AllowLocalPolicy})
		return err
	})
	if err != nil {
		res := PublishResult{}
		if KindOf(err) == KindDenied {
			res.Gate = o.Gate
		}
		return res, hosterr.Classify(conflict(err), "publish "+id)
	}
	orig, err := h.ShowCard(ctx, id)
	if err != nil {
		return PublishResult{}, err
	}
	cp, err := h.ShowCard(ctx, o.CopyID)
	return PublishResult{Original: orig, Copy: cp, Gate: o.Gate, Export: h.autoExport(ctx, o.CopyID)}, err
}
