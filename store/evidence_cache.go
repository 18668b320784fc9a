package store

import (
	"context"
	"fmt"
	"sync"

	"github.com/palacehq/palace/domain"
)

// evidenceCache holds evidence rows as RecentEvidence and EvidenceTexts
// read them (id, content, field, provenance, source, anchor), by rowid.
// Evidence is append-only: the database refuses any change but a
// redaction's new content, which it accepts only with a matching row in
// evidence_redactions, itself append-only — so that table's largest rowid
// versions every row held. A brief reads a hundred recent rows and the
// evidence its cards cite on every call; the context ranking reads the
// cited evidence of small selections. Bounded by rows and by the bytes of
// their content, since evidence can be a long log.
type evidenceCache struct {
	mu      sync.Mutex
	version int64
	byRow   map[int64]domain.Evidence
	byID    map[string]int64
	bytes   int
}

const (
	evidenceCacheMax      = 1 << 14
	evidenceCacheMaxBytes = 16 << 20
)

// evidenceVersion reads the version before the rows it versions.
func (s *Store) evidenceVersion(ctx context.Context) (int64, error) {
	var v int64
	if err := s.db.QueryRowContext(ctx, `SELECT coalesce((SELECT max(rowid) FROM evidence_redactions), 0)`).Scan(&v); err != nil {
		return 0, fmt.Errorf("read evidence version: %w", err)
	}
	return v, nil
}

// at moves the cache to version, emptying it when that differs. Callers
// hold mu.
func (c *evidenceCache) at(version int64) {
	if c.byRow == nil || c.version != version {
		c.byRow, c.byID, c.bytes, c.version = map[int64]domain.Evidence{}, map[string]int64{}, 0, version
	}
}

// rows returns the rows of rowids the cache holds at version, and the
// rowids it does not hold.
func (c *evidenceCache) rows(version int64, rowids []int64) (map[int64]domain.Evidence, []int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at(version)
	out := make(map[int64]domain.Evidence, len(rowids))
	var missing []int64
	for _, r := range rowids {
		if e, ok := c.byRow[r]; ok {
			out[r] = e
		} else {
			missing = append(missing, r)
		}
	}
	return out, missing
}

// ids returns the rows of ids the cache holds at version, and the ids it
// does not hold.
func (c *evidenceCache) ids(version int64, ids []string) (map[string]domain.Evidence, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at(version)
	out := make(map[string]domain.Evidence, len(ids))
	var missing []string
	for _, id := range ids {
		if r, ok := c.byID[id]; ok {
			out[id] = c.byRow[r]
		} else {
			missing = append(missing, id)
		}
	}
	return out, missing
}

// put keeps rows read at version, unless a newer read moved the cache on.
func (c *evidenceCache) put(version int64, rows map[int64]domain.Evidence) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byRow == nil || c.version != version {
		return
	}
	for r, e := range rows {
		if len(c.byRow) >= evidenceCacheMax || c.bytes+len(e.Content) > evidenceCacheMaxBytes {
			c.byRow, c.byID, c.bytes = map[int64]domain.Evidence{}, map[string]int64{}, 0
			if len(e.Content) > evidenceCacheMaxBytes/16 {
				continue // one row this large is not worth the others
			}
		}
		if _, ok := c.byRow[r]; !ok {
			c.bytes += len(e.Content)
		}
		c.byRow[r], c.byID[e.ID] = e, r
	}
}

// readEvidenceRows reads the evidence rows where selects, keyed by rowid.
func (s *Store) readEvidenceRows(ctx context.Context, where string, args []any) (map[int64]domain.Evidence, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT rowid, id, content, field, provenance, source_ref, anchor_id FROM evidence WHERE `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("read evidence: %w", err)
	}
	defer rows.Close()
	out := map[int64]domain.Evidence{}
	for rows.Next() {
		var r int64
		var e domain.Evidence
		if err := rows.Scan(&r, &e.ID, &e.Content, &e.Field, (*string)(&e.Provenance), &e.SourceRef, &e.AnchorID); err != nil {
			return nil, fmt.Errorf("read evidence: %w", err)
		}
		out[r] = e
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read evidence: %w", err)
	}
	return out, nil
}
