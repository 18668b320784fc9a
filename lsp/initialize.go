package lsp

import (
	"cmp"
	"context"
	"slices"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"
)

// clientCaps is what palace uses of the client's capabilities.
type clientCaps struct {
	// refresh are the refresh requests it takes (workspace/codeLens/refresh,
	// workspace/inlayHint/refresh).
	refresh  []string
	markdown bool
}

func (s *Server) initialize(ctx context.Context, p *protocol.InitializeParams) (*protocol.InitializeResult, error) {
	settings, notes, err := applySettings(defaultSettings(), p.InitializationOptions)
	if err != nil {
		s.log.Printf("initializationOptions: %v; using the defaults", err)
		notes = append(notes, err.Error()+"; using the defaults")
	}
	var caps clientCaps
	if w := p.Capabilities.Workspace; w != nil {
		if w.CodeLens != nil && w.CodeLens.RefreshSupport != nil && *w.CodeLens.RefreshSupport {
			caps.refresh = append(caps.refresh, protocol.MethodWorkspaceCodeLensRefresh)
		}
		if w.InlayHint != nil && w.InlayHint.RefreshSupport != nil && *w.InlayHint.RefreshSupport {
			caps.refresh = append(caps.refresh, protocol.MethodWorkspaceInlayHintRefresh)
		}
	}
	caps.markdown = true
	if td := p.Capabilities.TextDocument; td != nil && td.Hover != nil && len(td.Hover.ContentFormat) > 0 {
		caps.markdown = slices.Contains(td.Hover.ContentFormat, protocol.MarkupKindMarkdown)
	}
	var folders []string
	if fs, ok := p.WorkspaceFolders.Get(); ok {
		for _, f := range fs {
			if path := fsPath(f.URI); path != "" {
				folders = append(folders, path)
			}
		}
	}
	// Older clients (Neovim 0.7 among them) may send only rootUri or rootPath.
	//lint:ignore SA1019 fall back to rootUri when there are no workspace folders
	if len(folders) == 0 && p.RootURI != nil {
		//lint:ignore SA1019 see above
		if path := fsPath(*p.RootURI); path != "" {
			folders = append(folders, path)
		}
	}
	//lint:ignore SA1019 see above
	if root, ok := p.RootPath.Get(); ok && len(folders) == 0 && root != "" {
		folders = append(folders, root)
	}

	s.mu.Lock()
	s.state = stateInitialized
	s.caps = caps
	s.settings = settings
	s.folders = folders
	s.mu.Unlock()
	s.warn(notes)

	yes := true
	sync := protocol.TextDocumentSyncKindIncremental
	res := &protocol.InitializeResult{
		ServerInfo: protocol.ServerInfo{Name: "palace", Version: protocol.NewOptional(cmp.Or(s.opts.Version, "dev"))},
		Capabilities: protocol.ServerCapabilities{
			PositionEncoding: protocol.PositionEncodingKindUTF16,
			TextDocumentSync: &protocol.TextDocumentSyncOptions{
				OpenClose: &yes, Change: &sync, Save: &protocol.SaveOptions{},
			},
			HoverProvider:          protocol.Boolean(true),
			CodeLensProvider:       &protocol.CodeLensOptions{},
			InlayHintProvider:      protocol.Boolean(true),
			ExecuteCommandProvider: protocol.ExecuteCommandOptions{Commands: commandNames(s.opts.Mode)},
			Workspace: &protocol.WorkspaceOptions{WorkspaceFolders: &protocol.WorkspaceFoldersServerCapabilities{
				Supported: &yes, ChangeNotifications: protocol.Boolean(true),
			}},
		},
	}
	return res, nil
}

// initialized opens the workspace folders so their watchers run before any
// document is opened.
func (s *Server) initialized(ctx context.Context, _ *protocol.InitializedParams) {
	s.mu.Lock()
	folders := slices.Clone(s.folders)
	s.mu.Unlock()
	s.goBackground(func(ctx context.Context) {
		for _, f := range folders {
			if _, err := s.workspaceAt(ctx, f); err != nil {
				s.logMessage(protocol.MessageTypeError, "open workspace %s: %v", f, err)
			}
		}
	})
}

func (s *Server) shutdown(ctx context.Context, _ *struct{}) (any, error) {
	s.mu.Lock()
	s.state = stateShutdown
	s.mu.Unlock()
	return nil, nil
}

// fsPath is the file system path of a file: URI, "" for other schemes.
func fsPath(u uri.URI) string {
	if !u.IsFile() {
		return ""
	}
	return u.FsPath()
}

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
