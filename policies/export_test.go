package policies

// Served0 returns what serves p, or the zero Served.
func (s *Set) Served0(p Point) Served { return s.served[p] }

// CallsInFlight counts the decisions running on s's .wasm modules.
func CallsInFlight(s *Set) int {
	if s.life == nil {
		return 0
	}
	s.life.mu.Lock()
	defer s.life.mu.Unlock()
	return s.life.calls
}

// ModuleOf returns the module serving p, or nil when no module does.
func ModuleOf(s *Set, p Point) any {
	if e, ok := s.engines[p].(*wasmEngine); ok {
		return e.m
	}
	return nil
}

// WasmInput is the JSON a .wasm module receives for in.
func WasmInput(p Point, in any) ([]byte, error) { return wasmInput(p, in) }
