package policies

import (
	"context"
	"errors"
	"fmt"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
)

// ErrNotServed is returned when no policy of the set serves a point.
var ErrNotServed = errors.New("no policy serves this decision point")

// Eval evaluates point p with input (a JSON-shaped Go value or a pre-built
// ast.Value) under the set's deadline and returns the raw JSON-shaped output
// (maps, slices, json.Number, string, bool). An undefined decision is an
// error: a policy must always answer.
func (s *Set) Eval(ctx context.Context, p Point, input any) (any, error) {
	pq, ok := s.prepared[p]
	if !ok {
		return nil, fmt.Errorf("evaluate %s: %w", p.Package(), ErrNotServed)
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
