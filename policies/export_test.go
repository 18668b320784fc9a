package policies

import (
	"encoding/json"
	"fmt"

	"github.com/open-policy-agent/opa/v1/ast"
)

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

// RegoInputJSON is the JSON form of the OPA value a Rego policy receives
// for in.
func RegoInputJSON(in any) ([]byte, error) {
	v, ok := inputValue(in)
	if !ok {
		return nil, fmt.Errorf("input of type %T is not a decision point input", in)
	}
	j, err := ast.JSON(v)
	if err != nil {
		return nil, err
	}
	return json.Marshal(j)
}
