package lsp

import (
	"context"

	"go.lsp.dev/uri"

	"github.com/palacehq/palace/host/pack"
)

// palace's own requests (and commands) palace/context and palace/brief take
// the flags of `palace context` and `palace brief` (host's JSON names) plus
// "uri", the document the request is about, and answer what the command
// prints with --format json. A context pack is not a dry run unless asked:
// a pack the person requests is an injection like any other.
const (
	methodContext = "palace/context"
	methodBrief   = "palace/brief"
)

type contextParams struct {
	URI uri.URI `json:"uri,omitempty"`
	pack.ContextRequest
}

type briefParams struct {
	URI uri.URI `json:"uri,omitempty"`
	pack.BriefRequest
}

func (s *Server) palaceContext(ctx context.Context, p *contextParams) (any, error) {
	req := p.ContextRequest
	s.aboutDocument(p.URI, &req.File, &req.Language)
	if req.Budget == 0 {
		req.Budget = s.currentSettings().Budget
	}
	ws, err := s.commandWorkspace(ctx, p.URI)
	if err != nil {
		return nil, err
	}
	return jsonResult(ws.h.Pack().Context(ctx, req))
}

func (s *Server) palaceBrief(ctx context.Context, p *briefParams) (any, error) {
	req := p.BriefRequest
	s.aboutDocument(p.URI, &req.File, &req.Language)
	ws, err := s.commandWorkspace(ctx, p.URI)
	if err != nil {
		return nil, err
	}
	return jsonResult(ws.h.Pack().Brief(ctx, req))
}

// aboutDocument sets an unset file to u's path, and an unset language to
// the open document's.
func (s *Server) aboutDocument(u uri.URI, file, lang *string) {
	if path := fsPath(u); path != "" && *file == "" {
		*file = path
		if d, ok := s.openDoc(u); ok && *lang == "" {
			*lang = d.lang
		}
	}
}
