package mcp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palacehq/palace/host"
)

// Options configure New. The zero value serves silently as version "devel".
type Options struct {
	// Version is reported to clients in serverInfo. Defaults to "devel".
	Version string
	// Logger receives the server's own log (connections, each tool call with
	// its duration). Defaults to discarding everything: stdout carries
	// JSON-RPC, so a logger must write elsewhere (the CLI uses stderr).
	Logger *slog.Logger
}

// Server is palace's MCP server over one Host. It is safe for concurrent
// use: the SDK handles each call on its own goroutine, and the Host is safe
// for concurrent use.
type Server struct {
	h      *host.Host
	srv    *sdk.Server
	log    *slog.Logger
	hidden map[string]bool
	res    cardResources
}

// New builds the server for h, whose mode decides the tool list: in agent
// mode the human-only tools are absent, and calls to them are refused with
// JSON-RPC error -32602 before any host code runs.
func New(h *host.Host, opts Options) *Server {
	version := cmp.Or(opts.Version, "devel")
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{h: h, log: log, hidden: map[string]bool{}}
	if h.Mode() == host.Agent {
		for _, n := range HumanOnlyTools {
			s.hidden[n] = true
		}
	}
	s.srv = sdk.NewServer(&sdk.Implementation{Name: "palace", Title: "palace — governed memory", Version: version}, &sdk.ServerOptions{
		Instructions: Instructions,
		Logger:       log,
		// No logging capability: palace sends no log notifications, and a
		// client must not expect any.
		Capabilities: &sdk.ServerCapabilities{},
	})
	for _, t := range s.catalogue() {
		if s.hidden[t.def.Name] {
			continue
		}
		s.srv.AddTool(t.def, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return t.call(ctx, req.Params.Arguments), nil
		})
	}
	s.addResources()
	s.addPrompts()
	s.srv.AddReceivingMiddleware(s.recoverAll, s.modeGuard, s.logCalls, s.resyncAfterCardChange)
	return s
}

// cardChangingTools are the tools after which the card resources may have
// changed.
var cardChangingTools = map[string]bool{ToolDistill: true, ToolLink: true, ToolVerify: true, ToolPromote: true, ToolDemote: true,
	ToolRetire: true, ToolPublish: true, ToolAuditAction: true}

// resyncAfterCardChange refreshes the card resources after a tool call
// that may have changed a card, so the list_changed notification follows
// the change at once rather than at the next periodic resync.
func (s *Server) resyncAfterCardChange(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		if r, ok := req.(*sdk.CallToolRequest); ok && method == "tools/call" && r.Params != nil && cardChangingTools[r.Params.Name] {
			if serr := s.SyncResources(ctx); serr != nil {
				s.log.Warn("card resources not refreshed", "error", serr)
			}
		}
		return res, err
	}
}

// Connect serves one session on t (tests use the SDK's in-memory
// transports) and returns it; the session ends when t closes or ctx ends.
func (s *Server) Connect(ctx context.Context, t sdk.Transport) (*sdk.ServerSession, error) {
	if err := s.SyncResources(ctx); err != nil {
		s.log.Warn("card resources not listed", "error", err)
	}
	ss, err := s.srv.Connect(ctx, t, nil)
	if err != nil {
		return nil, fmt.Errorf("connect mcp session: %w", err)
	}
	return ss, nil
}

// Run serves one session over stdio until in ends (the client closed its
// end) and every request read before the end has been answered, or until
// ctx is cancelled (the first SIGINT), which cancels the calls in flight;
// either ends cleanly with a nil error. Host operations roll back whole,
// so nothing is half-written. While it runs, the host's policy set
// is kept current (host.WatchPolicies): edited policies apply without a
// restart, and a broken edit leaves the last good set serving.
func (s *Server) Run(ctx context.Context, in io.Reader, out io.Writer) error {
	if err := s.SyncResources(ctx); err != nil {
		s.log.Warn("card resources not listed", "error", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	if w, err := s.h.WatchPolicies(ctx, s.policyReloaded); err != nil {
		// Not fatal: the set then loads on first use, as in the CLI.
		s.log.Warn("policies are not watched; edits apply after a restart", "error", err)
	} else {
		// The watch must be over before the caller closes the host.
		defer w.Stop()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.resync(ctx, defaultResyncPeriod)
	}()
	// The resync must be over before the caller closes the host.
	defer func() {
		cancel()
		<-done
	}()
	err := s.srv.Run(ctx, &StdioTransport{In: in, Out: out})
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) || errors.Is(err, sdk.ErrConnectionClosed) {
		return nil
	}
	return fmt.Errorf("serve mcp: %w", err)
}

// policyReloaded logs a reload of the policy watch.
func (s *Server) policyReloaded(r host.PolicyReload) {
	if r.Err != nil {
		s.log.Warn(r.Message())
		return
	}
	s.log.Info(r.Message())
}

// notInAgentMode is the message of the -32602 error a human-only tool gets
// in agent mode, with %q the tool name.
const notInAgentMode = "Tool %q not available in agent mode"

// modeGuard answers tools/call for a human-only tool in agent mode with
// JSON-RPC -32602 and the fixed message the issue specifies. Without it
// the SDK would answer "unknown tool", which hides why.
func (s *Server) modeGuard(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method == "tools/call" {
			if r, ok := req.(*sdk.CallToolRequest); ok && r.Params != nil && s.hidden[r.Params.Name] {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(notInAgentMode, r.Params.Name)}
			}
		}
		return next(ctx, method, req)
	}
}

// recoverAll turns a panic anywhere under the method handlers into a
// JSON-RPC internal error, so no request can end the process.
func (s *Server) recoverAll(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (res sdk.Result, err error) {
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("panic in mcp handler", "method", method, "panic", p)
				res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("palace: %s failed unexpectedly (a bug in palace): %v", method, p)}
			}
		}()
		return next(ctx, method, req)
	}
}

// logCalls logs each tool call with its outcome and duration.
func (s *Server) logCalls(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		r, ok := req.(*sdk.CallToolRequest)
		if method != "tools/call" || !ok || r.Params == nil {
			return next(ctx, method, req)
		}
		start := time.Now()
		res, err := next(ctx, method, req)
		attrs := []any{"tool", r.Params.Name, "duration", time.Since(start)}
		if tr, ok := res.(*sdk.CallToolResult); ok && tr != nil && tr.IsError {
			attrs = append(attrs, "is_error", true)
		}
		if err != nil {
			attrs = append(attrs, "error", err)
		}
		s.log.Debug("tools/call", attrs...)
		return res, err
	}
}
