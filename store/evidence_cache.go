package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/palacehq/palace/domain"
)

// The evidence cache holds evidence rows as RecentEvidence and
// EvidenceTexts read them (id, content, field, provenance, source,
// anchor), by rowid, as of the data version: evidence is append-only but
// for a redaction's new content, which the database accepts only with a
// new row in evidence_redactions, which the version counts. Bounded by
// rows and by the bytes of their content, since evidence can be a long
// log. evidenceRowids maps ids to rowids, which never change.
const (
	evidenceCacheMax      = 1 << 14
	evidenceCacheMaxBytes = 16 << 20
)

func evidenceBytes(_ int64, e domain.Evidence) int { return len(e.Content) }

// readEvidenceRows reads the evidence rows where selects, keyed by rowid.
func (s *Store) readEvidenceRows(ctx context.Context, where string, args []any) (map[int64]domain.Evidence, error) {
	out := map[int64]domain.Evidence{}
	err := queryEach(ctx, s.db, `SELECT rowid, id, content, field, provenance, source_ref, anchor_id FROM evidence WHERE `+where, args, func(rows *sql.Rows) error {
		var r int64
		var e domain.Evidence
		if err := rows.Scan(&r, &e.ID, &e.Content, &e.Field, (*string)(&e.Provenance), &e.SourceRef, &e.AnchorID); err != nil {
			return err
		}
		out[r] = e
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read evidence: %w", err)
	}
	return out, nil
}
