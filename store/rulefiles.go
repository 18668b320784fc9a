package store

import (
	"context"

	"github.com/palacehq/palace/domain"
)

// EvidenceBySource returns the evidence at anchorID with this content hash
// whose source_ref starts with refPrefix (a file's "path#L"), oldest first;
// an empty slice when there is none. Re-importing a rule file finds its
// rules here, so a rule moved to another line is not recorded twice.
func (tx *Tx) EvidenceBySource(ctx context.Context, anchorID, sha256, refPrefix string) ([]domain.Evidence, error) {
	var out []domain.Evidence
	if err := queryEvidence(ctx, tx.tx, "find evidence by source "+refPrefix, `SELECT `+evidenceCols+` FROM evidence
		WHERE anchor_id = ? AND content_sha256 = ? AND instr(source_ref, ?) = 1
		ORDER BY created_at, id`, []any{anchorID, sha256, refPrefix}, func(e domain.Evidence) { out = append(out, e) }); err != nil {
		return nil, err
	}
	return out, nil
}
