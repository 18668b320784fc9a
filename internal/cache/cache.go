// Package cache holds values read from a source that changes, bounded and
// versioned: a Map keeps its entries as of one version of the source, and a
// read at another version empties it. Callers read the version before the
// data it versions, once per request.
//
// A Map is bounded by its count of entries and, optionally, their summed
// cost: a Put that would pass either empties it first (no eviction one at
// a time). Its zero value, bounds set, is ready and safe for concurrent
// use; it must not be copied after first use.
package cache

import "sync"

// DefaultMax is the bound on entries of a Map whose Max is 0.
const DefaultMax = 1 << 12

// Map holds values by key as of one version (Ver) of their source.
type Map[Ver, K comparable, V any] struct {
	// Max bounds the entries held; 0 means DefaultMax.
	Max int
	// Cost, when set, weighs an entry; the entries held weigh at most
	// MaxCost, and an entry heavier than MaxCost/16 is not kept.
	Cost    func(K, V) int
	MaxCost int

	mu   sync.Mutex
	ver  Ver
	m    map[K]V
	cost int
}

// Forever is the only version of a Memo.
type Forever = struct{}

// Memo is a Map of values that never go stale: of a pure function of the
// key, or of data that never changes once written.
type Memo[K comparable, V any] = Map[Forever, K, V]

// at moves the map to ver, emptying it when it held another. Callers hold mu.
func (c *Map[Ver, K, V]) at(ver Ver) {
	if c.m == nil || c.ver != ver {
		c.m, c.ver, c.cost = map[K]V{}, ver, 0
	}
}

// Get returns the value of k at ver. A read at another version than the
// one held empties the map and moves it to ver.
func (c *Map[Ver, K, V]) Get(ver Ver, k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at(ver)
	v, ok := c.m[k]
	return v, ok
}

// GetMany calls found with the index in keys and the value of each key
// the map holds at ver (as Get) and returns the others, in keys' order.
func (c *Map[Ver, K, V]) GetMany(ver Ver, keys []K, found func(i int, v V)) (missing []K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at(ver)
	for i, k := range keys {
		if v, ok := c.m[k]; ok {
			found(i, v)
		} else {
			missing = append(missing, k)
		}
	}
	return missing
}

// Put keeps v for k, read at ver, unless the map holds another version
// (a newer read moved it on: v may be stale).
func (c *Map[Ver, K, V]) Put(ver Ver, k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.put(ver, k, v)
}

// PutMany keeps value(k) for each of keys, read at ver, as Put. More keys
// than the bound are not kept at all.
func (c *Map[Ver, K, V]) PutMany(ver Ver, keys []K, value func(K) V) {
	if len(keys) > c.max() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range keys {
		c.put(ver, k, value(k))
	}
}

func (c *Map[Ver, K, V]) max() int {
	if c.Max > 0 {
		return c.Max
	}
	return DefaultMax
}

func (c *Map[Ver, K, V]) put(ver Ver, k K, v V) {
	if c.m == nil {
		c.at(ver)
	} else if c.ver != ver {
		return
	}
	w := 0
	if c.Cost != nil {
		w = c.Cost(k, v)
		if w > c.MaxCost/16 {
			return
		}
	}
	old, held := c.m[k]
	if held && c.Cost != nil {
		c.cost -= c.Cost(k, old)
	}
	if !held && len(c.m) >= c.max() || c.Cost != nil && c.cost+w > c.MaxCost {
		c.m, c.cost = map[K]V{}, 0
	}
	c.m[k] = v
	c.cost += w
}

// Of returns the value of k at ver, computing it with f and keeping it
// when the map does not hold it. f runs without the map locked.
func (c *Map[Ver, K, V]) Of(ver Ver, k K, f func(K) V) V {
	if v, ok := c.Get(ver, k); ok {
		return v
	}
	v := f(k)
	c.Put(ver, k, v)
	return v
}

// Version returns the version the map holds entries at; ok is false
// before the first read.
func (c *Map[Ver, K, V]) Version() (ver Ver, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ver, c.m != nil
}

// Move moves the map from version from to to, keeping the entries drop
// does not report, when it holds from; it reports whether it did. A
// caller that knows which entries a change touched keeps the others.
func (c *Map[Ver, K, V]) Move(from, to Ver, drop func(K) bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || c.ver != from {
		return false
	}
	for k, v := range c.m {
		if drop(k) {
			if c.Cost != nil {
				c.cost -= c.Cost(k, v)
			}
			delete(c.m, k)
		}
	}
	c.ver = to
	return true
}
