package lsp

import (
	"context"

	"go.lsp.dev/uri"

	"github.com/palacehq/palace/host/pack"
)

// palace/context's params mirror the flags of `palace context`
// (host.ContextRequest's JSON names) plus "uri", the document the request
// is about (it sets file and picks the workspace).
const (
	methodContext = "palace/context"
)

// contextParams are the params of palace/context and the palace.context
// command.
type contextParams struct {
	URI uri.URI `json:"uri,omitempty"`
	pack.ContextRequest
}

// palaceContext returns the context pack, exactly as `palace context
// --format json` prints it for the same request. It is not a dry run
// unless asked: a pack the person requests is an injection like any other.
func (s *Server) palaceContext(ctx context.Context, p *contextParams) (any, error) {
	req, ws, err := s.contextRequest(ctx, p)
	if err != nil {
		return nil, err
	}
	pack, err := ws.h.Pack().Context(ctx, req)
	if err != nil {
		return nil, rpcError(err)
	}
	return jsonResult(pack)
}

// contextRequest fills the request from the document and the settings.
func (s *Server) contextRequest(ctx context.Context, p *contextParams) (pack.ContextRequest, *workspace, error) {
	req := p.ContextRequest
	if path := fsPath(p.URI); path != "" && req.File == "" {
		req.File = path
		if d, ok := s.docs.get(p.URI); ok && req.Language == "" {
			req.Language = d.lang
		}
	}
	if req.Budget == 0 {
		req.Budget = s.currentSettings().Budget
	}
	ws, err := s.commandWorkspace(ctx, p.URI)
	if err != nil {
		return req, nil, rpcError(err)
	}
	return req, ws, nil
}
