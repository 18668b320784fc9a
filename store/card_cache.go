package store

import (
	"context"
	"fmt"
	"sync"

	"github.com/palacehq/palace/domain"
)

// cardCache holds whole cards by rowid as of one card_version: any UPDATE
// or DELETE of a card row — by palace or not, by any process — bumps the
// version, which empties the cache at the next read, and an inserted card
// has a rowid the cache cannot hold yet. Reading a request's ~200
// candidates whole (and decoding their scopes and triggers) was a fifth of
// a context request on the 10k-card benchmark palace; the cached read
// takes rowids from an index and the rest from memory. Entries are also
// checked against the id the index gives. The cards it hands out share
// their scope and trigger lists with the cache: callers copy a list before
// changing it. Bounded like textCache, at fewer entries (a card weighs
// more than its text: ~1 KB, so at most ~8 MB).
type cardCache struct {
	mu      sync.Mutex
	version int64
	m       map[int64]domain.Card
}

const cardCacheMax = 1 << 13

// get returns the card at rowid if the cache holds it at version with the
// id want ("" = any id: a rowid names one card for good).
func (c *cardCache) get(version, rowid int64, want string) (domain.Card, bool) {
	if c.m == nil || c.version != version {
		return domain.Card{}, false
	}
	card, ok := c.m[rowid]
	return card, ok && (want == "" || card.ID == want)
}

// reset empties the cache when it holds another version.
func (c *cardCache) reset(version int64) {
	if c.m == nil || c.version != version {
		c.m, c.version = map[int64]domain.Card{}, version
	}
}

// put keeps cards read at version, unless a newer read moved the cache on.
func (c *cardCache) put(version int64, cards map[int64]domain.Card) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.version != version || c.m == nil {
		return
	}
	if len(c.m)+len(cards) > cardCacheMax {
		c.m = map[int64]domain.Card{}
	}
	for rid, card := range cards {
		c.m[rid] = card
	}
}

// rowCard is a selected card's rowid and id.
type rowCard struct {
	rowid int64
	id    string
}

// cardsAt returns the cards of rows, read at version, from the cache or
// the table, in rows' order; a card gone since rows were read (deleted by
// something other than palace) is left out.
func (s *Store) cardsAt(ctx context.Context, version int64, rows []rowCard) ([]domain.Card, error) {
	out := make([]domain.Card, len(rows))
	var missing []int64
	at := map[int64]int{}
	s.cards.mu.Lock()
	s.cards.reset(version)
	for i, r := range rows {
		if c, ok := s.cards.get(version, r.rowid, r.id); ok {
			out[i] = c
		} else {
			missing = append(missing, r.rowid)
			at[r.rowid] = i
		}
	}
	s.cards.mu.Unlock()
	if len(missing) == 0 {
		return out, nil
	}
	read := make(map[int64]domain.Card, len(missing))
	for len(missing) > 0 {
		n := min(len(missing), 500)
		chunk := missing[:n]
		missing = missing[n:]
		q, err := s.db.QueryContext(ctx, `SELECT `+cardCols+`, rowid FROM cards WHERE rowid IN (`+placeholders(n)+`)`, anySlice(chunk)...)
		if err != nil {
			return nil, fmt.Errorf("read cards: %w", err)
		}
		if err := scanCardsWith(q, func(c domain.Card, rowid int) {
			if i, ok := at[int64(rowid)]; ok {
				out[i] = c
				read[int64(rowid)] = c
			}
		}); err != nil {
			return nil, err
		}
	}
	s.cards.put(version, read)
	if len(read) < len(at) {
		kept := out[:0]
		for i, c := range out {
			if _, wanted := at[rows[i].rowid]; !wanted || c.ID != "" {
				kept = append(kept, c)
			}
		}
		out = kept
	}
	return out, nil
}

// cardVersion reads card_version: before the cards it versions, so that
// what is cached is at least as new as its version says.
func (s *Store) cardVersion(ctx context.Context) (int64, error) {
	var v int64
	if err := s.db.QueryRowContext(ctx, `SELECT n FROM card_version`).Scan(&v); err != nil {
		return 0, fmt.Errorf("read card version: %w", err)
	}
	return v, nil
}

// memoryCache holds what CountMemory counts of the cards at a set of
// anchors — cards per status, and the sorted expiry times of those whose
// expiry counts — as of the cards' version: card_version (updates and
// deletes) and the largest card rowid (inserts). Counting the repository's
// cards per status on every context request was a tenth of its CPU on the
// 10k-card benchmark palace; the expired count at a given time is a
// binary search in the cached times. A request names one anchor chain, so
// a handful of keys is all a process holds; more empty it.
type memoryCache = versionedCache[memoryCounts]

type memoryVersion struct{ changes, maxRowID int64 }

type memoryCounts struct {
	byStatus map[string]int
	expires  []string
}

// versionedCache holds a few values by key as of one version of the
// cards (see memoryCache, selectionCache); a read at another version
// empties it, and more than versionedCacheMax keys empty it too.
type versionedCache[V any] struct {
	mu      sync.Mutex
	version memoryVersion
	m       map[string]V
}

const versionedCacheMax = 64

func (c *versionedCache[V]) get(version memoryVersion, key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || c.version != version {
		c.m, c.version = map[string]V{}, version
		var zero V
		return zero, false
	}
	m, ok := c.m[key]
	return m, ok
}

func (c *versionedCache[V]) put(version memoryVersion, key string, m V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.version != version || c.m == nil {
		return
	}
	if len(c.m) >= versionedCacheMax {
		c.m = map[string]V{}
	}
	c.m[key] = m
}
