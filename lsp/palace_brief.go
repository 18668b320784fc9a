package lsp

import (
	"context"

	"go.lsp.dev/uri"

	"github.com/palacehq/palace/host/pack"
)

// methodBrief is palace/brief: its params mirror the flags of `palace
// brief` (host.BriefRequest's JSON names) plus "uri", the document it is
// about.
const methodBrief = "palace/brief"

// briefParams are the params of palace/brief and the palace.brief command.
type briefParams struct {
	URI uri.URI `json:"uri,omitempty"`
	pack.BriefRequest
}

// palaceBrief returns the brief, exactly as `palace brief --format json`
// prints it for the same request.
func (s *Server) palaceBrief(ctx context.Context, p *briefParams) (any, error) {
	req := p.BriefRequest
	if path := fsPath(p.URI); path != "" && req.File == "" {
		req.File = path
		if d, ok := s.docs.get(p.URI); ok && req.Language == "" {
			req.Language = d.lang
		}
	}
	ws, err := s.commandWorkspace(ctx, p.URI)
	if err != nil {
		return nil, rpcError(err)
	}
	b, err := ws.h.Pack().Brief(ctx, req)
	if err != nil {
		return nil, rpcError(err)
	}
	return jsonResult(b)
}
