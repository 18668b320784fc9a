package store

import (
	"context"
	"fmt"
	"sync"

	"github.com/palacehq/palace/domain"
)

// linkCache holds cards' links as LinkRows reads them (card, evidence,
// role, in creation order), as of one link version: link_version, which
// any UPDATE or DELETE of a link bumps, and the largest link rowid, which
// any INSERT raises (rowids of a table without AUTOINCREMENT only reuse
// the largest after it is deleted, which the counter sees). A context
// request reads the links of its ~200 candidates, ~6,000 rows on the
// 10k-card benchmark palace: a seventh of its CPU before the cache. A
// card read without links is held with none. Bounded like cardCache, at
// fewer cards (~30 links each on that palace: ~3 KB), so a long-running
// process holds at most ~15 MB of them.
//
// The full links LinksFor returns (notes, times, the evidence's source and
// original) live in a second, smaller linkCache under the same version:
// evidence is append-only but for redacted content, which they do not
// hold, and a new evidence_duplicates row (append-only too) can change an
// old link's original, so the version carries that table's largest rowid.
type linkCache struct {
	mu      sync.Mutex
	version linkVersion
	m       map[string][]domain.Link
	// limit bounds the cards held; 0 means linkCacheMax.
	limit int
}

type linkVersion struct{ changes, maxRowID, maxDuplicate int64 }

const (
	linkCacheMax = 1 << 12
	// fullLinkCacheMax bounds the full links held: a brief reads those of
	// five candidates, a card listing those of many, which bypass it.
	fullLinkCacheMax = 1 << 9
)

// get returns the links the cache holds for ids at version, and the ids
// it does not hold.
func (c *linkCache) get(version linkVersion, ids []string) (map[string][]domain.Link, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string][]domain.Link, len(ids))
	if c.m == nil || c.version != version {
		c.m, c.version = map[string][]domain.Link{}, version
		return out, ids
	}
	var missing []string
	for _, id := range ids {
		if ls, ok := c.m[id]; ok {
			if len(ls) > 0 {
				out[id] = ls
			}
		} else {
			missing = append(missing, id)
		}
	}
	return out, missing
}

// put keeps the links of ids read at version (an id absent from read has
// none), unless a newer read moved the cache on.
func (c *linkCache) put(version linkVersion, ids []string, read map[string][]domain.Link) {
	c.mu.Lock()
	defer c.mu.Unlock()
	limit := c.limit
	if limit == 0 {
		limit = linkCacheMax
	}
	if c.version != version || c.m == nil || len(ids) > limit {
		return
	}
	if len(c.m)+len(ids) > limit {
		c.m = map[string][]domain.Link{}
	}
	for _, id := range ids {
		c.m[id] = read[id]
	}
}

// linkVersion reads the links' version before the links it versions.
func (s *Store) linkVersion(ctx context.Context) (linkVersion, error) {
	var v linkVersion
	if err := s.db.QueryRowContext(ctx, `SELECT (SELECT n FROM link_version), coalesce((SELECT max(rowid) FROM card_links), 0),
		coalesce((SELECT max(rowid) FROM evidence_duplicates), 0)`).Scan(&v.changes, &v.maxRowID, &v.maxDuplicate); err != nil {
		return v, fmt.Errorf("read link version: %w", err)
	}
	return v, nil
}
