package lsp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/pack"
	"github.com/palacehq/palace/internal/finding"
)

// workspace is one host — a palace bound to a directory's anchors — with
// the caches of hover, code lens and inlay hints, all of one generation:
// it moves when the database changes (data_version, any process) or the
// policy set is swapped, and nothing cached outlives it.
type workspace struct {
	s     *Server
	root  string
	h     *host.Host
	probe *host.ChangeProbe
	// views composes hover and code lens, with caches reset empties.
	views *host.EditorViews
	// stop ends the workspace's watchers; done closes when they have.
	stop context.CancelFunc
	done sync.WaitGroup

	// compileMu serializes trigger compilation (one compile per generation).
	compileMu sync.Mutex

	// mu guards the generation and the caches below.
	mu         sync.Mutex
	version    int64
	gen        uint64
	triggers   *pack.TriggerSet
	triggerGen uint64
	hintCache  map[uri.URI]hintsEntry
	// matchCaches keep each open document's line matches across edits.
	matchCaches map[uri.URI]*pack.MatchCache
	// policyErrs are the located errors of the last policy reload that
	// failed, by file; nil after a good one.
	policyErrs map[string][]finding.Finding
}

type hintsEntry struct {
	version int32
	gen     uint64
	hints   pack.Hints
}

// workspaceFor returns the workspace a document belongs to: the innermost
// workspace folder holding it, else one opened at the document's directory
// (and shared with every document of the same checkout).
func (s *Server) workspaceFor(ctx context.Context, path string) (*workspace, error) {
	s.mu.Lock()
	best := ""
	for _, f := range s.folders {
		if within(path, f) && len(f) > len(best) {
			best = f
		}
	}
	s.mu.Unlock()
	if best == "" {
		best = filepath.Dir(path)
		if path == "" {
			var err error
			if best, err = os.Getwd(); err != nil {
				return nil, fmt.Errorf("find a directory for the document: %w", err)
			}
		}
	}
	return s.workspaceAt(ctx, best)
}

// workspaceAt returns the workspace of dir, opening it on first use.
func (s *Server) workspaceAt(ctx context.Context, dir string) (*workspace, error) {
	s.mu.Lock()
	if ws, ok := s.spaces[dir]; ok {
		s.mu.Unlock()
		return ws, nil
	}
	s.mu.Unlock()
	// The home is the server's alone (see Settings): a workspace's
	// settings never choose it.
	home := s.opts.Home
	if strings.HasPrefix(home, "~/") {
		if u, err := os.UserHomeDir(); err == nil {
			home = filepath.Join(u, home[2:])
		}
	}
	h, err := host.Open(ctx, host.Options{Home: home, Cwd: dir, Mode: s.opts.Mode, Actor: s.opts.Actor})
	if err != nil {
		return nil, err
	}
	probe, err := h.NewChangeProbe(ctx)
	if err != nil {
		h.Close()
		return nil, err
	}
	version, err := probe.Version(ctx)
	if err != nil {
		probe.Close()
		h.Close()
		return nil, err
	}
	ws := &workspace{s: s, root: dir, h: h, probe: probe, version: version, views: h.EditorViews(), matchCaches: map[uri.URI]*pack.MatchCache{}}
	ws.reset()

	s.mu.Lock()
	// Another request may have opened it meanwhile; keep the first, and
	// share a host between folders of the same checkout.
	other := s.spaces[dir]
	for _, o := range s.spaces {
		if loc := o.h.Location(); other == nil && loc.InGit && loc.Worktree == h.Location().Worktree && o.h.Home() == h.Home() {
			other = o
		}
	}
	if other != nil {
		s.spaces[dir] = other
		s.mu.Unlock()
		probe.Close()
		h.Close()
		return other, nil
	}
	s.spaces[dir] = ws
	s.mu.Unlock()
	ws.start()
	return ws, nil
}

// closeWorkspaces closes every workspace (the home changed, or the session
// ends); they reopen on next use.
func (s *Server) closeWorkspaces() {
	s.mu.Lock()
	spaces := s.spaces
	s.spaces = map[string]*workspace{}
	s.mu.Unlock()
	// Folders of one checkout share a workspace: close each once.
	seen := map[*workspace]bool{}
	for _, ws := range spaces {
		if !seen[ws] {
			seen[ws] = true
			if ws.stop != nil {
				ws.stop()
			}
			ws.done.Wait()
			ws.probe.Close()
			ws.h.Close()
		}
	}
}

// reset drops every cache and moves to a new generation. Callers hold mu
// (or own ws exclusively).
func (ws *workspace) reset() {
	ws.gen++
	ws.views.Reset()
	ws.hintCache = map[uri.URI]hintsEntry{}
}

// sync checks the database's data_version and, when another connection
// committed since the last look, starts a new generation and lets every
// open document know (diagnostics, code lens and inlay hint refresh).
func (ws *workspace) sync(ctx context.Context) error {
	v, err := ws.probe.Version(ctx)
	if err != nil {
		return err
	}
	ws.mu.Lock()
	moved := v != ws.version
	if moved {
		ws.version = v
		ws.reset()
	}
	ws.mu.Unlock()
	if moved {
		ws.s.changed(ws)
	}
	return nil
}

// triggerSet returns the compiled trigger patterns of this generation (a
// request has called sync first).
func (ws *workspace) triggerSet(ctx context.Context) (*pack.TriggerSet, uint64, error) {
	ws.compileMu.Lock()
	defer ws.compileMu.Unlock()
	ws.mu.Lock()
	set, setGen, gen := ws.triggers, ws.triggerGen, ws.gen
	ws.mu.Unlock()
	if set != nil && setGen == gen {
		return set, gen, nil
	}
	next, err := ws.h.Pack().CompileTriggers(ctx, set)
	if err != nil {
		return nil, 0, err
	}
	// Said when what is skipped changes, not on every recompile; in the
	// background, as a request's handler must not wait on the client.
	if inv := next.Invalid(); len(inv) > 0 && (set == nil || len(set.Invalid()) != len(inv)) {
		ws.s.goBackground(func(context.Context) {
			ws.s.logMessage(protocol.MessageTypeWarning, "%d stored trigger pattern(s) or card(s) give no hints (first: card %s: %s); palace hints FILE lists them all",
				len(inv), inv[0].CardID, inv[0].Error)
		})
	}
	ws.mu.Lock()
	if ws.gen == gen {
		ws.triggers, ws.triggerGen = next, gen
	}
	ws.mu.Unlock()
	return next, gen, nil
}

// matches brings ws up to date (sync) and returns the trigger matches of
// d, computed once per document version and generation.
func (ws *workspace) matches(ctx context.Context, d *document) ([]pack.TriggerMatch, error) {
	if err := ws.sync(ctx); err != nil {
		return nil, err
	}
	set, gen, err := ws.triggerSet(ctx)
	if err != nil {
		return nil, err
	}
	ws.mu.Lock()
	e, ok := ws.hintCache[d.uri]
	cache := ws.matchCaches[d.uri]
	if cache == nil {
		cache = &pack.MatchCache{}
		ws.matchCaches[d.uri] = cache
	}
	ws.mu.Unlock()
	if ok && e.version == d.version && e.gen == gen {
		return e.hints.Matches, nil
	}
	res, err := ws.h.Pack().Hints(ctx, set, pack.HintsRequest{File: d.path, Text: d.text, Language: d.lang, Cache: cache})
	if err != nil {
		return nil, err
	}
	// A value computed from the old data must not outlive its generation.
	ws.mu.Lock()
	if ws.gen == gen {
		ws.hintCache[d.uri] = hintsEntry{version: d.version, gen: gen, hints: res}
	}
	ws.mu.Unlock()
	return res.Matches, nil
}

// forgetDocument drops what is cached for a closed document.
func (ws *workspace) forgetDocument(u uri.URI) {
	ws.mu.Lock()
	delete(ws.matchCaches, u)
	delete(ws.hintCache, u)
	ws.mu.Unlock()
}

// invalidate starts a new generation (after a policy swap) and tells the
// open documents.
func (ws *workspace) invalidate() {
	ws.mu.Lock()
	ws.reset()
	ws.mu.Unlock()
	ws.s.changed(ws)
}

// within reports whether path is dir or inside it.
func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, dir+string(filepath.Separator))
}

// changed reacts to new data or policies in ws (nil: everything, as when
// settings or folders changed): recompute the diagnostics of its open
// documents and ask the client to refresh lenses and hints.
func (s *Server) changed(ws *workspace) {
	for _, d := range s.openDocs() {
		if ws == nil || within(d.path, ws.root) {
			s.diags.schedule(d.uri)
		}
	}
	s.refreshClient()
}

// refreshClient asks the client to pull code lenses and inlay hints again,
// where it supports that (workspace/codeLens/refresh, workspace/inlayHint/refresh).
// Bursts coalesce: one refresh is in flight at a time, and a change during
// it sends one more.
func (s *Server) refreshClient() {
	methods := s.clientCapabilities().refresh
	if len(methods) == 0 {
		return
	}
	s.refreshMu.Lock()
	defer s.refreshMu.Unlock()
	if s.refreshing {
		s.refreshAgain = true
		return
	}
	s.refreshing = true
	s.goBackground(func(ctx context.Context) {
		for {
			for _, m := range methods {
				cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				if _, err := s.conn.Call(cctx, m, nil, nil); err != nil && ctx.Err() == nil {
					s.log.Printf("%s: %v", m, err)
				}
				cancel()
			}
			s.refreshMu.Lock()
			again := s.refreshAgain && ctx.Err() == nil
			s.refreshAgain, s.refreshing = false, again
			s.refreshMu.Unlock()
			if !again {
				return
			}
		}
	})
}
