package store

import (
	"context"
	"fmt"
	"sync"

	"github.com/palacehq/palace/internal/cache"
)

// dataVersion is the version of the data the store's caches hold: the
// trigger-kept counters of any UPDATE or DELETE of cards, card texts and
// links, by any process, and the largest rowid of each table that only
// grows, which any INSERT raises. A write of any of these tables empties
// every cache at its next read.
type dataVersion struct {
	cards, maxCard, texts, links, maxLink, maxDuplicate, maxRedaction, maxObservation int64
}

// versioned is a cache of the store: its entries as of one dataVersion.
type versioned[K comparable, V any] = cache.Map[dataVersion, K, V]

const versionQuery = `SELECT (SELECT n FROM card_version), coalesce((SELECT max(rowid) FROM cards), 0),
	(SELECT n FROM card_text_version), (SELECT n FROM link_version), coalesce((SELECT max(rowid) FROM card_links), 0),
	coalesce((SELECT max(rowid) FROM evidence_duplicates), 0), coalesce((SELECT max(rowid) FROM evidence_redactions), 0),
	coalesce((SELECT max(rowid) FROM evidence_observations), 0)`

// pinKey keys a request's pinned version in its context.
type pinKey struct{ s *Store }

type pinned struct {
	once sync.Once
	v    dataVersion
	err  error
}

// Pin returns ctx with the store's data version read once, at the first
// cached read, for every read made with it; pinning twice is a no-op. Reads
// may then miss changes committed after the first, so a caller that writes
// and reads back does not pin.
func (s *Store) Pin(ctx context.Context) context.Context {
	if _, ok := ctx.Value(pinKey{s}).(*pinned); ok {
		return ctx
	}
	return context.WithValue(ctx, pinKey{s}, &pinned{})
}

// version returns the data version ctx pinned, or reads it. Read before the
// data, so a cache entry is at least as new as its version.
func (s *Store) version(ctx context.Context) (dataVersion, error) {
	if p, ok := ctx.Value(pinKey{s}).(*pinned); ok {
		p.once.Do(func() { p.v, p.err = s.readVersion(ctx) })
		return p.v, p.err
	}
	return s.readVersion(ctx)
}

func (s *Store) readVersion(ctx context.Context) (dataVersion, error) {
	var v dataVersion
	if err := s.db.QueryRowContext(ctx, versionQuery).Scan(&v.cards, &v.maxCard, &v.texts, &v.links, &v.maxLink,
		&v.maxDuplicate, &v.maxRedaction, &v.maxObservation); err != nil {
		return v, fmt.Errorf("read data version: %w", err)
	}
	return v, nil
}

// memoMax bounds the caches of data that never changes.
const memoMax = 1 << 16

func newStore(db *handle, path string) *Store {
	s := &Store{db: db, path: path, writeSlot: make(chan struct{}, 1)}
	s.cards.Max = cardCacheMax
	s.texts.Max = textCacheMax
	s.selections.Max = selectionCacheMax
	s.links.Max, s.fullLinks.Max = linkCacheMax, fullLinkCacheMax
	s.evidence.Max, s.evidence.MaxCost, s.evidence.Cost = evidenceCacheMax, evidenceCacheMaxBytes, evidenceBytes
	s.citations.Max = 1
	s.rowids.Max, s.refs.Max, s.evidenceRowids.Max = memoMax, memoMax, memoMax
	s.windows.Max = windowCacheMax
	return s
}
