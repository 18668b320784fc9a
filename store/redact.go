package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/palacehq/palace/domain"
)

// ErrRedacted is returned by RedactEvidence for a row already redacted.
var ErrRedacted = errors.New("evidence already redacted")

// Redaction records that a row's content was replaced by Notice.
type Redaction struct {
	EvidenceID string           `json:"evidence_id"`
	Notice     string           `json:"notice"`
	Reason     string           `json:"reason"`
	Actor      string           `json:"actor"`
	ActorType  domain.ActorType `json:"actor_type"`
	CreatedAt  string           `json:"created_at"`
}

// RedactEvidence records r and replaces the content of evidence
// r.EvidenceID with r.Notice; every other column, the original content's
// hash included, is kept. The schema's triggers allow no other change to
// evidence. ErrNotFound if there is no such row, ErrRedacted if it was
// redacted before.
func (tx *Tx) RedactEvidence(ctx context.Context, r Redaction) error {
	var n, done int
	err := tx.tx.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM evidence WHERE id = ?),
		(SELECT count(*) FROM evidence_redactions WHERE evidence_id = ?)`, r.EvidenceID, r.EvidenceID).Scan(&n, &done)
	switch {
	case err != nil:
		return fmt.Errorf("redact evidence %s: %w", r.EvidenceID, err)
	case n == 0:
		return fmt.Errorf("evidence %s: %w", r.EvidenceID, ErrNotFound)
	case done > 0:
		return fmt.Errorf("evidence %s: %w", r.EvidenceID, ErrRedacted)
	}
	if _, err := tx.exec(ctx, `INSERT INTO evidence_redactions(evidence_id, notice, reason, actor, actor_type, created_at) VALUES (?,?,?,?,?,?)`,
		r.EvidenceID, r.Notice, r.Reason, r.Actor, r.ActorType, r.CreatedAt); err != nil {
		return fmt.Errorf("redact evidence %s: %w", r.EvidenceID, err)
	}
	if _, err := tx.exec(ctx, `UPDATE evidence SET content = ? WHERE id = ?`, r.Notice, r.EvidenceID); err != nil {
		return fmt.Errorf("redact evidence %s: %w", r.EvidenceID, err)
	}
	return nil
}

// EvidenceRedaction reads the redaction of one row; ErrNotFound if the row
// was never redacted.
func (s *Store) EvidenceRedaction(ctx context.Context, id string) (Redaction, error) {
	var r Redaction
	err := s.db.QueryRowContext(ctx, `SELECT evidence_id, notice, reason, actor, actor_type, created_at
		FROM evidence_redactions WHERE evidence_id = ?`, id).Scan(&r.EvidenceID, &r.Notice, &r.Reason, &r.Actor, (*string)(&r.ActorType), &r.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return Redaction{}, fmt.Errorf("redaction of %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Redaction{}, fmt.Errorf("read redaction of %s: %w", id, err)
	}
	return r, nil
}
