package policies

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
)

// ErrNotServed is returned when no policy of the set serves a point.
var ErrNotServed = errors.New("no policy serves this decision point")

// Decider is one engine serving decision points (OPA or a WebAssembly
// module); shape checks, failing closed and fallback are the Set's, the
// same for every engine.
//
// Decide evaluates point p on in (the point's typed input or, for Rego, an
// ast.Value) under ctx and the engine's deadline and returns the decision,
// not yet shape-checked. An error means the policy failed: it errored, ran
// past its deadline, was undefined for the input or wrote no JSON.
type Decider interface {
	Decide(ctx context.Context, p Point, in any) (ast.Value, error)
}

// Compile-time guards: both engines serve points through Decider.
var (
	_ Decider = (*regoEngine)(nil)
	_ Decider = (*wasmEngine)(nil)
)

// decide sends p to the engine serving it.
func (s *Set) decide(ctx context.Context, p Point, in any) (ast.Value, error) {
	e, ok := s.engines[p]
	if !ok {
		return nil, fmt.Errorf("evaluate %s: %w", p.Package(), ErrNotServed)
	}
	v, err := e.Decide(ctx, p, in)
	runtime.KeepAlive(s) // the set's cleanup closes its modules
	return v, err
}

// regoEngine evaluates one prepared Rego query.
type regoEngine struct {
	set     *Set
	timeout time.Duration
}

func (e *regoEngine) Decide(ctx context.Context, p Point, in any) (ast.Value, error) {
	input, err := regoInput(p, in)
	if err != nil {
		return nil, err
	}
	pq, err := e.set.preparedFor(p)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	rs, err := pq.Eval(ctx, rego.EvalParsedInput(input), rego.EvalGenerateJSON(rawTerm))
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("evaluate %s: deadline of %s exceeded: %w", p.Package(), e.timeout, ctx.Err())
		}
		return nil, fmt.Errorf("evaluate %s: %w", p.Package(), err)
	}
	if len(rs) == 0 || len(rs[0].Expressions) == 0 {
		return nil, fmt.Errorf("evaluate %s: %s is undefined for this input", p.Package(), p.Query())
	}
	v, ok := rs[0].Expressions[0].Value.(ast.Value)
	if !ok {
		return nil, fmt.Errorf("evaluate %s: unexpected result %T", p.Package(), rs[0].Expressions[0].Value)
	}
	return v, nil
}
