package lsp

import (
	"context"
	"slices"

	"go.lsp.dev/protocol"
)

func (s *Server) didChangeConfiguration(ctx context.Context, p *protocol.DidChangeConfigurationParams) {
	s.mu.Lock()
	cur := s.settings
	next, notes, err := applySettings(cur, p.Settings)
	var stale map[string]*workspace
	if err == nil {
		s.settings = next
		// Another home drops the open workspaces in the same critical
		// section, so no request sees the new settings with a workspace of
		// the old home; they reopen on next use.
		if next.Home != cur.Home {
			stale, s.spaces = s.spaces, map[string]*workspace{}
		}
	}
	s.mu.Unlock()
	if err != nil {
		s.logMessage(protocol.MessageTypeError, "%v; keeping the previous settings", err)
		return
	}
	for _, n := range notes {
		s.logMessage(protocol.MessageTypeWarning, "%s", n)
	}
	closeSpaces(stale)
	s.refreshAll()
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
	s.refreshAll()
}
