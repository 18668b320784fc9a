package lsp

import (
	"context"
	"errors"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/internal/finding"
	"github.com/palacehq/palace/policies"
)

// start runs the workspace's watchers until it closes or the session ends:
// the data_version poll (changes by any process), the policies watcher
// (reload and swap, located errors) and fsnotify on .palace/ (the box).
func (ws *workspace) start() {
	ctx, cancel := context.WithCancel(ws.s.bg)
	ws.stop = cancel
	// The cited files as they are now: what every view computed from here
	// on sees, and what the poll compares with.
	if _, err := ws.h.CitedCodeChanged(ctx); err != nil {
		ws.s.log.Printf("look at cited code in %s: %v", ws.root, err)
	}
	for _, fn := range []func(context.Context){ws.poll, ws.watchPolicies, ws.watchBox} {
		ws.done.Add(1)
		go func() {
			defer ws.done.Done()
			defer ws.s.recoverBackground()
			fn(ctx)
		}()
	}
}

// poll notices commits by other processes: one PRAGMA data_version per
// tick; and, every codePollTicks ticks, changes to the files cards cite
// (one stat per cited file), which move what is stale without moving the
// database.
func (ws *workspace) poll(ctx context.Context) {
	t := time.NewTicker(ws.s.opts.PollInterval)
	defer t.Stop()
	for tick := 1; ; tick++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := ws.sync(ctx); err != nil && ctx.Err() == nil {
				ws.s.log.Printf("poll %s: %v", ws.root, err)
			}
			if tick%codePollTicks == 0 {
				ws.checkCitedCode(ctx)
			}
		}
	}
}

// codePollTicks is how many polls pass between looks at the cited files:
// with the default interval, twice a second.
const codePollTicks = 5

// checkCitedCode starts a new generation when a file cards cite changed.
func (ws *workspace) checkCitedCode(ctx context.Context) {
	changed, err := ws.h.CitedCodeChanged(ctx)
	if err != nil {
		if ctx.Err() == nil {
			ws.s.log.Printf("look at cited code in %s: %v", ws.root, err)
		}
		return
	}
	if changed {
		ws.invalidate()
	}
}

// watchPolicies keeps the host's policy set current through
// host.WatchPolicies, the one policy watch every long-running surface
// uses: a good set is swapped in and the caches move on; a bad one leaves
// the old set serving and its located errors become diagnostics.
func (ws *workspace) watchPolicies(ctx context.Context) {
	w, err := ws.h.WatchPolicies(ctx, ws.policyChanged)
	if err != nil {
		ws.s.logMessage(protocol.MessageTypeError, "%v (policy changes need a restart)", err)
		return
	}
	<-w.Done()
}

func (ws *workspace) policyChanged(r host.PolicyReload) {
	byFile := map[string][]finding.Finding{}
	if r.Err != nil {
		var es policies.Errors
		if !errors.As(r.Err, &es) {
			es = policies.Errors{{Finding: finding.Finding{Code: "load_error", Severity: finding.Error, Message: r.Err.Error()}}}
		}
		for _, e := range es {
			f := e.Finding
			if f.Path != "" && !filepath.IsAbs(f.Path) {
				f.Path = filepath.Join(ws.root, f.Path)
			}
			byFile[f.Path] = append(byFile[f.Path], f)
		}
		ws.s.logMessage(protocol.MessageTypeWarning, "%s: %s", ws.root, r.Message())
	}
	ws.mu.Lock()
	old := ws.policyErrs
	ws.policyErrs = byFile
	ws.mu.Unlock()
	ws.s.publishPolicyErrors(old, byFile)
	if !r.KeptLastGood() {
		ws.invalidate()
	}
}

// watchBox re-checks the repository's box when it changes on disk (a
// commit, `palace mailbox distribute`, another editor).
func (ws *workspace) watchBox(ctx context.Context) {
	loc := ws.h.Location()
	if !loc.InGit {
		return
	}
	dotPalace := filepath.Join(loc.Worktree, ".palace")
	box := filepath.Join(dotPalace, "inbox.jsonl")
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		ws.s.log.Printf("watch %s: %v", dotPalace, err)
		return
	}
	defer fsw.Close()
	// Watch the worktree too, to see .palace/ appear.
	_ = fsw.Add(loc.Worktree)
	watching := fsw.Add(dotPalace) == nil
	// A commit moves HEAD: the history check needs the new base.
	gitDir := filepath.Join(loc.Worktree, ".git")
	_ = fsw.Add(gitDir)
	ws.s.diags.schedule(uri.File(box))
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-fsw.Events:
			if !ok {
				return
			}
			switch filepath.Clean(ev.Name) {
			case dotPalace:
				if !watching && ev.Has(fsnotify.Create) {
					watching = fsw.Add(dotPalace) == nil
					ws.s.diags.schedule(uri.File(box))
				}
			case box, filepath.Join(gitDir, "HEAD"), filepath.Join(gitDir, "index"):
				ws.s.diags.schedule(uri.File(box))
			}
		case err, ok := <-fsw.Errors:
			if !ok {
				return
			}
			ws.s.log.Printf("watch %s: %v", dotPalace, err)
		}
	}
}
