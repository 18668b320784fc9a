package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/palacehq/palace/domain"
)

// InsertObservations appends what evidence saw of the code it cites, in
// the transaction that records the evidence.
func (tx *Tx) InsertObservations(ctx context.Context, obs []domain.Observation) error {
	for _, o := range obs {
		if _, err := tx.exec(ctx, `INSERT INTO evidence_observations(evidence_id, n, kind, path, line_start, line_end, symbol, lines_sha256, git_commit, observed_at)
			VALUES (?,?,?,?,?,?,?,?,?,?)`,
			o.EvidenceID, o.N, o.Kind, o.Path, o.LineStart, o.LineEnd, o.Symbol, o.LinesSHA256, o.Commit, o.ObservedAt); err != nil {
			return fmt.Errorf("insert observation %d of %s: %w", o.N, o.EvidenceID, err)
		}
	}
	return nil
}

// Observations reads the observations of evidence rows, by evidence id, in
// their order.
func (s *Store) Observations(ctx context.Context, evidenceIDs []string) (map[string][]domain.Observation, error) {
	out := map[string][]domain.Observation{}
	for chunk := range slices.Chunk(evidenceIDs, 500) {
		err := queryEach(ctx, s.db, `SELECT evidence_id, n, kind, path, line_start, line_end, symbol, lines_sha256, git_commit, observed_at
			FROM evidence_observations WHERE evidence_id IN (`+placeholders(len(chunk))+`) ORDER BY evidence_id, n`, anySlice(chunk), func(rows *sql.Rows) error {
			var o domain.Observation
			err := rows.Scan(&o.EvidenceID, &o.N, (*string)(&o.Kind), &o.Path, &o.LineStart, &o.LineEnd, &o.Symbol, &o.LinesSHA256, &o.Commit, &o.ObservedAt)
			out[o.EvidenceID] = append(out[o.EvidenceID], o)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("read observations: %w", err)
		}
	}
	return out, nil
}

// CodeCitation is one observation of code by evidence linked to a card in
// a role that vouches for it (supporting or verification).
type CodeCitation struct {
	Role domain.Role
	// EvidenceAt is the evidence's recording time and EvidenceSeq its
	// rowid, which orders evidence recorded in the same millisecond.
	EvidenceAt  string
	EvidenceSeq int64
	SourceRef   string
	domain.Observation
}

// CodeCitations returns, for every card with supporting or verification
// evidence that observed code, those observations, by card id, in
// evidence order. The whole map is kept as of the data version (one
// entry per code-citing card); callers must not change it.
func (s *Store) CodeCitations(ctx context.Context) (map[string][]CodeCitation, error) {
	v, err := s.version(ctx)
	if err != nil {
		return nil, fmt.Errorf("read code citations: %w", err)
	}
	if m, ok := s.citations.Get(v, struct{}{}); ok {
		return m, nil
	}
	out := map[string][]CodeCitation{}
	if v.maxObservation > 0 {
		// CROSS JOIN keeps the observations the outer loop, so the read
		// grows with code-citing cards, not links (docs/rationale.md).
		err := queryEach(ctx, s.db, `SELECT l.card_id, l.role, e.created_at, e.rowid, e.source_ref,
			o.evidence_id, o.n, o.kind, o.path, o.line_start, o.line_end, o.symbol, o.lines_sha256, o.git_commit, o.observed_at
			FROM evidence_observations o
			CROSS JOIN card_links l ON l.evidence_id = o.evidence_id AND l.role IN ('supporting', 'verification')
			CROSS JOIN evidence e ON e.id = o.evidence_id
			ORDER BY l.card_id, e.rowid, o.n`, nil, func(rows *sql.Rows) error {
			var card string
			var c CodeCitation
			o := &c.Observation
			if err := rows.Scan(&card, (*string)(&c.Role), &c.EvidenceAt, &c.EvidenceSeq, &c.SourceRef,
				&o.EvidenceID, &o.N, (*string)(&o.Kind), &o.Path, &o.LineStart, &o.LineEnd, &o.Symbol, &o.LinesSHA256, &o.Commit, &o.ObservedAt); err != nil {
				return err
			}
			out[card] = append(out[card], c)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read code citations: %w", err)
		}
	}
	s.citations.Put(v, struct{}{}, out)
	return out, nil
}
