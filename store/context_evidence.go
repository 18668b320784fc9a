package store

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/internal/cache"
)

// FieldEvidence is a field with evidence and no card of the given statuses.
type FieldEvidence struct {
	Field    string
	Evidence int
	// Samples are up to three of the field's evidence ids, most recently
	// recorded first.
	Samples []string
}

// FieldsWithoutCards returns up to limit fields that hold at least minEvidence
// evidence rows at anchorIDs and no card with a status in statuses there,
// ordered by evidence count (most first), then field name.
func (s *Store) FieldsWithoutCards(ctx context.Context, anchorIDs []string, statuses []domain.Status, minEvidence, limit int) ([]FieldEvidence, error) {
	if len(anchorIDs) == 0 || len(statuses) == 0 || limit <= 0 {
		return nil, nil
	}
	in := placeholders(len(anchorIDs))
	args := anySlice(anchorIDs)
	args = append(args, anySlice(anchorIDs)...)
	args = append(args, strArgs(statuses)...)
	args = append(args, minEvidence, limit)
	var out []FieldEvidence
	err := queryEach(ctx, s.db, `SELECT e.field, sum(e.n) AS n FROM evidence_counts e
		WHERE e.anchor_id IN (`+in+`)
		AND e.field NOT IN (SELECT c.field FROM cards c WHERE c.anchor_id IN (`+in+`) AND c.status IN (`+placeholders(len(statuses))+`))
		GROUP BY e.field HAVING n >= ? ORDER BY n DESC, e.field LIMIT ?`, args, func(rows *sql.Rows) error {
		var f FieldEvidence
		if err := rows.Scan(&f.Field, &f.Evidence); err != nil {
			return err
		}
		out = append(out, f)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("find fields without cards: %w", err)
	}
	for i := range out {
		sargs := append(anySlice(anchorIDs), out[i].Field)
		err := queryEach(ctx, s.db, `SELECT id FROM evidence WHERE anchor_id IN (`+in+`) AND field = ?
			ORDER BY rowid DESC LIMIT 3`, sargs, func(rows *sql.Rows) error {
			var id string
			err := rows.Scan(&id)
			out[i].Samples = append(out[i].Samples, id)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("sample evidence of %s: %w", out[i].Field, err)
		}
	}
	return out, nil
}

// RecentEvidence returns up to limit evidence rows of anchorIDs, optionally
// of one field, most recently recorded first (by insertion order), with
// only ID, Content, Field, Provenance, SourceRef and AnchorID filled.
func (s *Store) RecentEvidence(ctx context.Context, anchorIDs []string, field string, limit int) ([]domain.Evidence, error) {
	if len(anchorIDs) == 0 || limit <= 0 {
		return nil, nil
	}
	// One arm per anchor, each read newest first from its index with the
	// limit, so no anchor's rows are sorted whole.
	arm := `SELECT * FROM (SELECT rowid AS rid FROM evidence WHERE anchor_id = ? ORDER BY rowid DESC LIMIT ?)`
	if field != "" {
		arm = `SELECT * FROM (SELECT rowid AS rid FROM evidence WHERE anchor_id = ? AND field = ? ORDER BY rowid DESC LIMIT ?)`
	}
	arms := make([]string, len(anchorIDs))
	var args []any
	for i, a := range anchorIDs {
		arms[i] = arm
		args = append(args, a)
		if field != "" {
			args = append(args, field)
		}
		args = append(args, limit)
	}
	args = append(args, limit)
	version, err := s.version(ctx)
	if err != nil {
		return nil, fmt.Errorf("read recent evidence: %w", err)
	}
	var rowids []int64
	err = queryEach(ctx, s.db, `SELECT rid FROM (`+strings.Join(arms, " UNION ALL ")+`) ORDER BY rid DESC LIMIT ?`, args, func(rows *sql.Rows) error {
		var r int64
		if err := rows.Scan(&r); err != nil {
			return err
		}
		rowids = append(rowids, r)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read recent evidence: %w", err)
	}
	got := make(map[int64]domain.Evidence, len(rowids))
	missing := s.evidence.GetMany(version, rowids, func(i int, e domain.Evidence) { got[rowids[i]] = e })
	if len(missing) > 0 {
		read, err := s.readEvidenceRows(ctx, `rowid IN (`+placeholders(len(missing))+`)`, anySlice(missing))
		if err != nil {
			return nil, fmt.Errorf("read recent evidence: %w", err)
		}
		s.keepEvidence(version, read)
		maps.Copy(got, read)
	}
	out := make([]domain.Evidence, 0, len(rowids))
	for _, r := range rowids {
		if e, ok := got[r]; ok {
			out = append(out, e)
		}
	}
	return out, nil
}

// EvidenceTexts reads the evidence rows with these ids with only ID,
// Content, Field, Provenance, SourceRef and AnchorID filled (what a brief
// quotes); absent ids are missing from the map.
func (s *Store) EvidenceTexts(ctx context.Context, ids []string) (map[string]domain.Evidence, error) {
	version, err := s.version(ctx)
	if err != nil {
		return nil, fmt.Errorf("read evidence texts: %w", err)
	}
	out := make(map[string]domain.Evidence, len(ids))
	var missing []string
	for _, id := range ids {
		if r, ok := s.evidenceRowids.Get(cache.Forever{}, id); !ok {
			missing = append(missing, id)
		} else if e, ok := s.evidence.Get(version, r); ok && e.ID == id {
			out[id] = e
		} else {
			missing = append(missing, id)
		}
	}
	for chunk := range slices.Chunk(missing, 500) {
		read, err := s.readEvidenceRows(ctx, `id IN (`+placeholders(len(chunk))+`)`, anySlice(chunk))
		if err != nil {
			return nil, err
		}
		s.keepEvidence(version, read)
		for _, e := range read {
			out[e.ID] = e
		}
	}
	return out, nil
}

// CitingCards returns, for each of evidenceIDs, the ids of the cards with a
// status in statuses that link to it (any role), sorted. Evidence no such
// card cites is missing from the map.
func (s *Store) CitingCards(ctx context.Context, evidenceIDs []string, statuses []domain.Status) (map[string][]string, error) {
	out := map[string][]string{}
	for len(evidenceIDs) > 0 && len(statuses) > 0 {
		n := min(len(evidenceIDs), 400)
		chunk := evidenceIDs[:n]
		evidenceIDs = evidenceIDs[n:]
		args := append(anySlice(chunk), strArgs(statuses)...)
		err := queryEach(ctx, s.db, `SELECT DISTINCT l.evidence_id, l.card_id FROM card_links l JOIN cards c ON c.id = l.card_id
			WHERE l.evidence_id IN (`+placeholders(len(chunk))+`) AND c.status IN (`+placeholders(len(statuses))+`)
			ORDER BY l.evidence_id, l.card_id`, args, func(rows *sql.Rows) error {
			var ev, card string
			if err := rows.Scan(&ev, &card); err != nil {
				return err
			}
			out[ev] = append(out[ev], card)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("find citing cards: %w", err)
		}
	}
	return out, nil
}

// SourceRefs returns the source_ref of each evidence id that exists. Source
// refs never change, so those read are kept for good; absent ids are not.
func (s *Store) SourceRefs(ctx context.Context, evidenceIDs []string) (map[string]string, error) {
	out := make(map[string]string, len(evidenceIDs))
	missing := s.refs.GetMany(cache.Forever{}, evidenceIDs, func(i int, ref string) { out[evidenceIDs[i]] = ref })
	for chunk := range slices.Chunk(missing, 500) {
		var found []string
		err := queryEach(ctx, s.db, `SELECT id, source_ref FROM evidence WHERE id IN (`+placeholders(len(chunk))+`)`, anySlice(chunk), func(rows *sql.Rows) error {
			var id, ref string
			if err := rows.Scan(&id, &ref); err != nil {
				return err
			}
			out[id] = ref
			found = append(found, id)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read source refs: %w", err)
		}
		s.refs.PutMany(cache.Forever{}, found, func(id string) string { return out[id] })
	}
	return out, nil
}

// keepEvidence keeps rows read at version in the evidence cache.
func (s *Store) keepEvidence(version dataVersion, read map[int64]domain.Evidence) {
	for r, e := range read {
		s.evidence.Put(version, r, e)
		s.evidenceRowids.Put(cache.Forever{}, e.ID, r)
	}
}
