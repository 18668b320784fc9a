package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/palacehq/palace/host"
)

// handler serves one method. Notifications run in wire order on the read
// loop (document changes must apply in order); calls release the read loop
// (jsonrpc2.Async) unless inOrder, so a slow request never blocks typing.
type handler struct {
	notification bool
	inOrder      bool
	fn           func(s *Server, ctx context.Context, params jsonrpc2.RawMessage) (any, error)
}

// call adapts a typed request handler; params decode with the protocol's
// union-aware decoder, and a host error becomes its JSON-RPC error.
func call[P, R any](fn func(*Server, context.Context, *P) (R, error)) handler {
	return handler{fn: func(s *Server, ctx context.Context, raw jsonrpc2.RawMessage) (any, error) {
		var p P
		if err := decodeParams(raw, &p); err != nil {
			return nil, err
		}
		res, err := fn(s, ctx, &p)
		return res, rpcError(err)
	}}
}

// inOrder marks a call that must finish before the next message is read.
func inOrder(h handler) handler {
	h.inOrder = true
	return h
}

// notification adapts a typed notification handler.
func notification[P any](fn func(*Server, context.Context, *P)) handler {
	h := call(func(s *Server, ctx context.Context, p *P) (any, error) {
		fn(s, ctx, p)
		return nil, nil
	})
	h.notification = true
	return h
}

func decodeParams(raw jsonrpc2.RawMessage, p any) error {
	if len(raw) == 0 {
		raw = jsonrpc2.RawMessage("{}")
	}
	if err := protocol.Unmarshal(raw, p); err != nil {
		return jsonrpc2.Errorf(jsonrpc2.InvalidParams, "invalid params: %v", err)
	}
	return nil
}

// methods is the server's method table. Each entry lives in the file named
// after its feature.
var methods = map[string]handler{
	protocol.MethodInitialize:                         inOrder(call((*Server).initialize)),
	protocol.MethodInitialized:                        notification((*Server).initialized),
	protocol.MethodShutdown:                           inOrder(call((*Server).shutdown)),
	protocol.MethodTextDocumentDidOpen:                notification((*Server).didOpen),
	protocol.MethodTextDocumentDidChange:              notification((*Server).didChange),
	protocol.MethodTextDocumentDidSave:                notification((*Server).didSave),
	protocol.MethodTextDocumentDidClose:               notification((*Server).didClose),
	protocol.MethodWorkspaceDidChangeConfiguration:    notification((*Server).didChangeConfiguration),
	protocol.MethodWorkspaceDidChangeWorkspaceFolders: notification((*Server).didChangeWorkspaceFolders),
	protocol.MethodTextDocumentHover:                  call((*Server).hover),
	protocol.MethodTextDocumentCodeLens:               call((*Server).codeLens),
	protocol.MethodTextDocumentInlayHint:              call((*Server).inlayHint),
	protocol.MethodWorkspaceExecuteCommand:            call((*Server).executeCommand),
	methodContext:                                     rawCall((*Server).palaceContext),
	methodBrief:                                       rawCall((*Server).palaceBrief),
}

// rawCall adapts a handler of palace's own requests, whose params decode
// with encoding/json into host's request types (the CLI's JSON names).
func rawCall[P, R any](fn func(*Server, context.Context, *P) (R, error)) handler {
	return handler{fn: func(s *Server, ctx context.Context, raw jsonrpc2.RawMessage) (any, error) {
		var p P
		if err := decodeArg(raw, &p); err != nil {
			return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "invalid params: %v", err)
		}
		res, err := fn(s, ctx, &p)
		return res, rpcError(err)
	}}
}

// handle is the connection's handler: the lifecycle gate, the method table,
// cancellation bookkeeping and panic recovery.
func (s *Server) handle(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	method := req.Method()
	isCall := req.IsCall()
	if method == protocol.MethodExit {
		s.exitOnce.Do(func() { close(s.exited) })
		return nil, nil
	}
	h, known := methods[method]
	if th, ok := s.testMethods[method]; ok {
		h, known = th, true
	}
	s.mu.Lock()
	state := s.state
	s.mu.Unlock()
	// A refused call gets its error; a refused notification is dropped.
	var refused error
	switch {
	case state == stateInitialized && method == protocol.MethodInitialize:
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, "initialize was already sent")
	case state == stateNew && method != protocol.MethodInitialize:
		refused = jsonrpc2.Errorf(jsonrpc2.ServerNotInitialized, "%s before initialize: the server is not initialized yet", method)
	case state == stateShutdown:
		refused = jsonrpc2.Errorf(jsonrpc2.InvalidRequest, "%s after shutdown: only exit is accepted now", method)
	case !known || h.notification == isCall:
		refused = jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "method not found: %s", method)
		if !isCall && !strings.HasPrefix(method, "$/") {
			s.log.Printf("ignoring unknown notification %s", method)
		}
	}
	if refused != nil {
		if !isCall {
			return nil, nil
		}
		return nil, refused
	}
	// The request's own context is pooled by jsonrpc2 and recycled when the
	// handler returns; a context derived from it (context.WithCancel starts
	// a goroutine that may look at it later) would touch a recycled value.
	// Handlers get a context of the connection's instead, and cancellation
	// comes from our own table.
	conn := jsonrpc2.DetachContext(ctx)
	if !isCall {
		// A notification's error would end the connection: log it instead.
		if _, err := s.run(conn, method, h, req.Params()); err != nil {
			s.logMessage(protocol.MessageTypeError, "%s: %v", method, err)
		}
		return nil, nil
	}
	id := req.ID()
	cctx, cancel := context.WithCancel(conn)
	s.cancels.Store(id, cancel)
	defer func() {
		s.cancels.Delete(id)
		cancel()
	}()
	if !h.inOrder {
		jsonrpc2.Async(ctx)
		// Async cloned the request's method and params out of the frame
		// buffer; the method read above still points into it.
		method = req.Method()
	}
	res, err := s.run(cctx, method, h, req.Params())
	if cctx.Err() != nil && conn.Err() == nil {
		return nil, protocol.ErrRequestCancelled
	}
	return res, err
}

// run calls h, turning a panic into an InternalError and a logMessage.
func (s *Server) run(ctx context.Context, method string, h handler, params jsonrpc2.RawMessage) (res any, err error) {
	defer func() {
		if r := recover(); r != nil {
			s.reportPanic(method, r)
			res, err = nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "palace: %s failed: internal error (panic: %v); the server is still running", method, r)
		}
	}()
	return h.fn(s, ctx, params)
}

func (s *Server) reportPanic(what string, r any) {
	s.log.Printf("panic in %s: %v\n%s", what, r, debug.Stack())
	if s.conn != nil {
		s.notify(protocol.MethodWindowLogMessage, &protocol.LogMessageParams{
			Type:    protocol.MessageTypeError,
			Message: fmt.Sprintf("palace: %s panicked: %v (recovered; please report it)", what, r),
		})
	}
}

// canceller handles $/cancelRequest on the read loop, ahead of everything
// queued after it, as a jsonrpc2.Preempter.
type canceller struct{ s *Server }

var _ jsonrpc2.Preempter = canceller{}

func (c canceller) Preempt(_ context.Context, req *jsonrpc2.Request) (any, error) {
	if req.Method() != protocol.MethodCancelRequest {
		return nil, jsonrpc2.ErrNotHandled
	}
	id, err := cancelID(req.Params())
	if err != nil {
		c.s.log.Printf("ignoring $/cancelRequest: %v", err)
	} else if cancel, ok := c.s.cancels.Load(id); ok {
		cancel.(context.CancelFunc)()
	}
	return struct{}{}, nil
}

// cancelID reads CancelParams.id: an integer (any JSON number form of one)
// or a string.
func cancelID(raw jsonrpc2.RawMessage) (jsonrpc2.ID, error) {
	var p struct {
		ID any `json:"id"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&p); err != nil {
		return jsonrpc2.ID{}, fmt.Errorf("params: %w", err)
	}
	switch id := p.ID.(type) {
	case nil:
		return jsonrpc2.ID{}, errors.New("no id")
	case string:
		return jsonrpc2.NewStringID(id), nil
	case json.Number:
		if n, err := id.Int64(); err == nil {
			return jsonrpc2.NewNumberID(n), nil
		}
		if f, err := id.Float64(); err == nil && f == float64(int64(f)) {
			return jsonrpc2.NewNumberID(int64(f)), nil
		}
	}
	return jsonrpc2.ID{}, fmt.Errorf("id %v is neither an integer nor a string", p.ID)
}

// lspCodec marshals protocol payloads with the protocol's union-aware
// encoder; jsonrpc2.RawMessage (palace's own results, encoded with
// encoding/json exactly as the CLI prints them) passes through.
type lspCodec struct{}

var _ jsonrpc2.Codec = lspCodec{}

func (lspCodec) Marshal(v any) ([]byte, error) {
	if m, ok := v.(jsonrpc2.RawMessage); ok {
		if m == nil {
			return []byte("null"), nil
		}
		return m, nil
	}
	return protocol.Marshal(v)
}

func (lspCodec) Unmarshal(data []byte, v any) error {
	if p, ok := v.(*jsonrpc2.RawMessage); ok {
		*p = append(jsonrpc2.RawMessage(nil), data...)
		return nil
	}
	return protocol.Unmarshal(data, v)
}

// jsonResult encodes v as the CLI's --format json would, unless err.
func jsonResult(v any, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "encode result: %v", err)
	}
	return jsonrpc2.RawMessage(b), nil
}

// decodeArg decodes JSON into v, refusing unknown fields so a typo in a
// client's params is an error that names it; absent or null leaves v zero.
func decodeArg(raw []byte, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// codeRequestFailed is LSP's RequestFailed: the request was valid but the
// server said no (a gate denied it).
const codeRequestFailed jsonrpc2.Code = -32803

// rpcError maps a host error onto a JSON-RPC error, one kind to one code, as
// the CLI maps kinds to exit codes: bad input and a mode refusal are
// InvalidParams (as MCP does), a denial is RequestFailed with the reasons
// as data, anything else is InternalError.
func rpcError(err error) error {
	if err == nil {
		return nil
	}
	var rpc *jsonrpc2.Error
	if errors.As(err, &rpc) {
		return err
	}
	if errors.Is(err, context.Canceled) {
		return protocol.ErrRequestCancelled
	}
	var he *host.Error
	if !errors.As(err, &he) {
		return jsonrpc2.Errorf(jsonrpc2.InternalError, "%v", err)
	}
	out := &jsonrpc2.Error{Message: he.Error()}
	switch he.Kind {
	case host.KindInvalid, host.KindMode:
		out.Code = jsonrpc2.InvalidParams
	case host.KindDenied:
		out.Code = codeRequestFailed
	default:
		out.Code = jsonrpc2.InternalError
	}
	if len(he.Reasons) > 0 || he.Field != "" {
		data, _ := json.Marshal(struct {
			Kind    string   `json:"kind"`
			Field   string   `json:"field,omitempty"`
			Reasons []string `json:"reasons,omitempty"`
		}{kindNames[he.Kind], he.Field, he.Reasons})
		out.Data = data
	}
	return out
}

var kindNames = map[host.Kind]string{host.KindInternal: "internal", host.KindInvalid: "invalid", host.KindDenied: "denied", host.KindMode: "mode"}
