package lsp

// cachedIn returns m[k] when it is there and still good (valid may be nil:
// every entry is), and otherwise loads it outside the workspace lock and
// stores it — unless the generation moved while it loaded, because a value
// computed from the old data must not outlive it. Every cache of a
// workspace goes through here, so the rule is written once.
func cachedIn[K comparable, V any](ws *workspace, m *map[K]V, k K, valid func(V) bool, load func() (V, error)) (V, error) {
	ws.mu.Lock()
	v, ok := (*m)[k]
	gen := ws.gen
	ws.mu.Unlock()
	if ok && (valid == nil || valid(v)) {
		return v, nil
	}
	v, err := load()
	if err != nil {
		var zero V
		return zero, err
	}
	ws.mu.Lock()
	if ws.gen == gen {
		if *m == nil {
			*m = map[K]V{}
		}
		(*m)[k] = v
	}
	ws.mu.Unlock()
	return v, nil
}
