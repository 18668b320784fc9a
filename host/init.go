package host

import (
	"context"
	"os"
	"path/filepath"

	"github.com/palacehq/palace/host/cardview"
	"github.com/palacehq/palace/store"
)

// InitResult reports Init.
type InitResult struct {
	Home          string             `json:"home"`
	Database      string             `json:"database"`
	SchemaVersion int                `json:"schema_version"`
	PolicyDir     string             `json:"policy_dir"`
	Anchor        cardview.AnchorRef `json:"anchor"`
}

// Init makes sure the home, its policy folder and the anchors of the current
// location exist. Running it again changes nothing.
func (h *Host) Init(ctx context.Context) (InitResult, error) {
	res := InitResult{Home: h.home, Database: h.store.Path(), SchemaVersion: store.SchemaVersion, PolicyDir: filepath.Join(h.home, "policies")}
	if err := os.MkdirAll(res.PolicyDir, 0o755); err != nil {
		return res, internal(err, "create %s", res.PolicyDir)
	}
	err := h.store.Tx(ctx, func(tx *store.Tx) error {
		a, err := h.ensureAnchor(ctx, tx, h.loc.Innermost())
		res.Anchor = cardview.AnchorRef{Kind: a.Kind, ID: a.ID, Identity: a.Identity}
		return err
	})
	if err != nil {
		return res, internal(err, "init anchors")
	}
	return res, nil
}
