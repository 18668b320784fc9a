package policies

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"runtime"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
)

// Served0 returns what serves p, or the zero Served.
func (s *Set) Served0(p Point) Served { return s.served[p] }

// CallsInFlight counts the decisions running on s's .wasm modules.
func CallsInFlight(s *Set) int {
	if s.life == nil {
		return 0
	}
	return int(s.life.calls.Load())
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

// Eval evaluates point p with input (a JSON-shaped Go value or a pre-built
// ast.Value) under the set's deadline and returns the raw JSON-shaped output
// (maps, slices, json.Number, string, bool). An undefined decision is an
// error: a policy must always answer.
//
// A point served by a .wasm module gets input as JSON (encoding/json's
// form of a Go value) and its output is decoded with json.Number.
func (s *Set) Eval(ctx context.Context, p Point, input any) (any, error) {
	if e, ok := s.engines[p].(*wasmEngine); ok {
		defer runtime.KeepAlive(s)
		return e.eval(ctx, p, input)
	}
	pq, err := s.preparedFor(p)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	var opt rego.EvalOption
	if v, ok := input.(ast.Value); ok {
		opt = rego.EvalParsedInput(v)
	} else {
		opt = rego.EvalInput(input)
	}
	rs, err := pq.Eval(ctx, opt)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("evaluate %s: deadline of %s exceeded: %w", p.Package(), s.timeout, ctx.Err())
		}
		return nil, fmt.Errorf("evaluate %s: %w", p.Package(), err)
	}
	if len(rs) == 0 || len(rs[0].Expressions) == 0 {
		return nil, fmt.Errorf("evaluate %s: %s is undefined for this input", p.Package(), p.Query())
	}
	return rs[0].Expressions[0].Value, nil
}

// eval is Set.Eval for a point a module serves.
func (e *wasmEngine) eval(ctx context.Context, p Point, input any) (any, error) {
	var in []byte
	var err error
	switch x := input.(type) {
	case ast.Value:
		var raw any
		if raw, err = ast.JSON(x); err == nil {
			in, err = json.Marshal(raw)
		}
	case GateInput, ScopeInput, LanesInput, MailboxInput, ResearchInput:
		in, err = wasmInput(p, x)
	default:
		in, err = json.Marshal(input)
	}
	if err != nil {
		return nil, fmt.Errorf("evaluate %s: encode input: %w", p.Package(), err)
	}
	out, err := e.call(ctx, p, in)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%s returned a malformed decision: output must be JSON: %w", p.Package(), err)
	}
	return v, nil
}
