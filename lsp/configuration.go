package lsp

import (
	"context"
	"slices"

	"go.lsp.dev/protocol"
)

func (s *Server) didChangeConfiguration(ctx context.Context, p *protocol.DidChangeConfigurationParams) {
	s.mu.Lock()
	next, notes, err := applySettings(s.settings, p.Settings)
	if err == nil {
		s.settings = next
	}
	s.mu.Unlock()
	if err != nil {
		s.logMessage(protocol.MessageTypeError, "%v; keeping the previous settings", err)
		return
	}
	s.warn(notes)
	s.changed(nil)
}

func (s *Server) didChangeWorkspaceFolders(ctx context.Context, p *protocol.DidChangeWorkspaceFoldersParams) {
	s.mu.Lock()
	for _, f := range p.Event.Removed {
		s.folders = slices.DeleteFunc(s.folders, func(x string) bool { return x == fsPath(f.URI) })
	}
	for _, f := range p.Event.Added {
		if path := fsPath(f.URI); path != "" && !slices.Contains(s.folders, path) {
			s.folders = append(s.folders, path)
		}
	}
	s.mu.Unlock()
	s.changed(nil)
}
