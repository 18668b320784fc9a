package host

import (
	"context"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/authority"
	"github.com/palacehq/palace/host/gatekeep"
	"github.com/palacehq/palace/host/teamsync"
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
	o, err := h.apply(ctx, authority.Change{Op: authority.OpPublish, CardID: id, Target: req.To, Reason: req.Reason,
		Reviewer: req.Reviewer, AllowLocalPolicy: req.AllowLocalPolicy})
	if err != nil {
		return PublishResult{Gate: o.Gate}, err
	}
	orig, err := h.ShowCard(ctx, id)
	if err != nil {
		return PublishResult{}, err
	}
	cp, err := h.ShowCard(ctx, o.CopyID)
	return PublishResult{Original: orig, Copy: cp, Gate: o.Gate, Export: h.autoExport(ctx, o.CopyID)}, err
}
