package lsp

import (
	"context"

	"go.lsp.dev/jsonrpc2"
)

// SetTestMethod adds a request handler to s (before Serve): tests use it
// for a handler that panics or one that blocks until cancelled.
func SetTestMethod(s *Server, method string, fn func(ctx context.Context, params []byte) (any, error)) {
	if s.testMethods == nil {
		s.testMethods = map[string]handler{}
	}
	s.testMethods[method] = handler{fn: func(_ *Server, ctx context.Context, raw jsonrpc2.RawMessage) (any, error) {
		return fn(ctx, raw)
	}}
}

// WaitDiagnostics blocks until n diagnostics passes have finished.
func WaitDiagnostics(s *Server, n uint64) {
	s.diags.mu.Lock()
	defer s.diags.mu.Unlock()
	for s.diags.passes < n {
		s.diags.cond.Wait()
	}
}

// DiagnosticsPasses counts finished diagnostics passes.
func DiagnosticsPasses(s *Server) uint64 {
	s.diags.mu.Lock()
	defer s.diags.mu.Unlock()
	return s.diags.passes
}
