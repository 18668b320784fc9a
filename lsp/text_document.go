package lsp

import (
	"context"

	"go.lsp.dev/protocol"
)

func (s *Server) didOpen(ctx context.Context, p *protocol.DidOpenTextDocumentParams) {
	td := p.TextDocument
	s.docs.Store(td.URI, newDocument(td.URI, string(td.LanguageID), td.Version, td.Text))
	s.diags.schedule(td.URI)
}

func (s *Server) didChange(ctx context.Context, p *protocol.DidChangeTextDocumentParams) {
	d, err := s.document(p.TextDocument.URI)
	if err != nil {
		s.log.Printf("didChange: %v", err)
		return
	}
	for _, c := range p.ContentChanges {
		if d, err = d.apply(c, p.TextDocument.Version); err != nil {
			s.logMessage(protocol.MessageTypeError, "didChange %s: %v; close and reopen the file to resynchronize", p.TextDocument.URI, err)
			return
		}
	}
	s.docs.Store(d.uri, d)
	s.diags.schedule(d.uri)
}

func (s *Server) didSave(ctx context.Context, p *protocol.DidSaveTextDocumentParams) {
	// A saved file may be code a card cites: look now, not at the next poll.
	s.diags.schedule(p.TextDocument.URI)
	if path := fsPath(p.TextDocument.URI); path != "" {
		s.goBackground(func(ctx context.Context) {
			if ws, err := s.workspaceFor(ctx, path); err == nil {
				ws.checkCitedCode(ctx)
			}
		})
	}
}

func (s *Server) didClose(ctx context.Context, p *protocol.DidCloseTextDocumentParams) {
	u := p.TextDocument.URI
	v, ok := s.docs.LoadAndDelete(u)
	if !ok {
		return
	}
	d := v.(*document)
	ws, err := s.workspaceFor(ctx, d.path)
	if err != nil {
		return
	}
	ws.forgetDocument(u)
	switch kindOf(d.path, ws.h.Home()) {
	case kindSource, kindCard:
		s.diags.publish(u, 0, false, nil)
	case kindBox:
		// The box on disk still has its findings.
		s.diags.schedule(u)
	}
}
