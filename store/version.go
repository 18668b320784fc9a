package store

import (
	"context"
	"fmt"
	"sync"

	"github.com/palacehq/palace/internal/cache"
)

// dataVersion is the version of the data the store's caches hold: the
// counters the database's triggers bump on any UPDATE or DELETE of cards,
// of card texts and of links — by palace or not, by any process — and the
// largest rowid of each table that only grows (cards, links, evidence
// duplicates, redactions, observations), which any INSERT raises. Rowids
// of a table without AUTOINCREMENT are reused only after the largest is
// deleted, which the counters see. Every cache of the store holds its
// entries as of one dataVersion, so a write of any of these tables empties
// them all at their next read.
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

// Pin returns ctx with the store's data version read once for every read
// made with it: the first read through a cache reads the version, later
// reads reuse it. One request pins its context once; pinning a pinned
// context returns it as it is. Reads with a pinned context may miss a
// change of cards or links committed after the first of them: a caller
// that writes those and then reads them back does not pin.
func (s *Store) Pin(ctx context.Context) context.Context {
	if _, ok := ctx.Value(pinKey{s}).(*pinned); ok {
		return ctx
	}
	return context.WithValue(ctx, pinKey{s}, &pinned{})
}

// version returns the data version ctx pinned, or reads it: before the
// data it versions, so that what a cache keeps is at least as new as its
// version says.
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

// newStore returns a store of db with its caches bounded.
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
