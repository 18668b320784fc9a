package policies

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
)

// DefaultDebounce is how long the policy folders must stay quiet before a
// Watcher reloads, so that one multi-step editor save is one reload.
const DefaultDebounce = 75 * time.Millisecond

// DefaultGrace is how long a Watcher keeps a replaced set open before it
// closes the set's .wasm modules; running decisions are always waited for.
const DefaultGrace = 10 * time.Second

// WatchOptions tune a Watcher. The zero value is valid.
type WatchOptions struct {
	// Options compile every set the watcher loads.
	Options
	// Debounce defaults to DefaultDebounce.
	Debounce time.Duration
	// Grace defaults to DefaultGrace.
	Grace time.Duration
}

// Watcher keeps the policy set of a long-running process current: after
// each burst of changes to the home and repo sources (even ones not created
// yet) it compiles the files and swaps the new set in atomically. A set that
// fails to compile never replaces the serving one, which keeps serving while
// every file it was built from exists; once one was deleted it is withdrawn
// (Current returns no set, and the errors). A burst that leaves the files as
// they were reloads nothing.
//
// All methods are safe for concurrent use. The watcher stops, closing Done,
// when Watch's context ends.
type Watcher struct {
	src  Sources
	opts WatchOptions
	fsw  *fsnotify.Watcher
	done chan struct{}
	cur  atomic.Pointer[Set]
	// loop goroutine only:
	watching map[string]bool // directories under watch
	print    string          // fingerprint of the last snapshot compiled
	retired  []*retired      // replaced sets not closed yet

	mu      sync.Mutex // guards subs, nextSub, lastErr
	subs    map[int]func(*Set, error)
	nextSub int
	lastErr error
}

// Watch loads the policy set from src and keeps it current until ctx ends.
// onChange (may be nil) is subscribed before the first load. A failed first
// load is reported by Current, not Watch, which fails only when the watcher
// cannot start.
func Watch(ctx context.Context, src Sources, opts WatchOptions, onChange func(*Set, error)) (*Watcher, error) {
	if opts.Debounce <= 0 {
		opts.Debounce = DefaultDebounce
	}
	if opts.Grace <= 0 {
		opts.Grace = DefaultGrace
	}
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch policies: %w", err)
	}
	w := &Watcher{src: src, opts: opts, fsw: fsw, done: make(chan struct{}), watching: map[string]bool{}, subs: map[int]func(*Set, error){}}
	if onChange != nil {
		w.Subscribe(onChange)
	}
	w.sync()
	w.reload(ctx)
	go w.run(ctx)
	return w, nil
}

// Current returns the serving set and the errors of the last reload when it
// failed (nil after a good one). The set is nil when no load has succeeded
// yet, or when a reload failed after a file of the serving set was deleted.
func (w *Watcher) Current() (*Set, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.cur.Load(), w.lastErr
}

// Subscribe calls fn after every reload attempt that found changed files,
// with the new set and nil or the serving set (maybe nil) and the located
// Errors. fn runs on the watcher's goroutine, in order, and must not block
// for long.
func (w *Watcher) Subscribe(fn func(*Set, error)) (cancel func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	id := w.nextSub
	w.nextSub++
	w.subs[id] = fn
	return func() {
		w.mu.Lock()
		delete(w.subs, id)
		w.mu.Unlock()
	}
}

// Done is closed when the watcher has stopped.
func (w *Watcher) Done() <-chan struct{} { return w.done }

func (w *Watcher) run(ctx context.Context) {
	defer close(w.done)
	defer w.fsw.Close()
	// Retired sets close now; the serving set stays open.
	defer func() {
		for _, r := range w.retired {
			if r.timer.Stop() {
				r.set.Close()
			}
		}
	}()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			if w.relevant(ev) {
				w.sync()
				timer.Reset(w.opts.Debounce)
			}
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				// Events were lost: look at the files themselves.
				w.sync()
				timer.Reset(w.opts.Debounce)
				continue
			}
			w.notify(w.cur.Load(), fmt.Errorf("watch policies: %w", err))
		case <-timer.C:
			w.sync()
			w.reload(ctx)
		}
	}
}

// reload reads the sources and, when they changed since the last attempt,
// compiles them and swaps the result in.
func (w *Watcher) reload(ctx context.Context) {
	snap, err := readSnapshot(w.src)
	if err != nil {
		w.fail(err, nil)
		return
	}
	if snap.fingerprint == w.print {
		return
	}
	w.print = snap.fingerprint
	set, err := snap.compile(ctx, w.opts.Options)
	if err != nil {
		w.fail(err, &snap)
		return
	}
	w.mu.Lock()
	old := w.cur.Swap(set)
	w.lastErr = nil
	w.mu.Unlock()
	w.notify(set, nil)
	if old != nil && old.life != nil {
		w.retire(old)
	}
}

// retired is a replaced set waiting for its grace period to end.
type retired struct {
	set   *Set
	timer *time.Timer
}

// retire closes a replaced set's modules after the grace period.
func (w *Watcher) retire(old *Set) {
	kept := w.retired[:0]
	for _, r := range w.retired {
		if !r.set.life.isClosed() {
			kept = append(kept, r)
		}
	}
	w.retired = append(kept, &retired{set: old, timer: time.AfterFunc(w.opts.Grace, func() { old.Close() })})
}

// fail records a reload that did not produce a set. The serving set stays
// only while every file it was built from is still in snap (when read);
// otherwise it is withdrawn.
func (w *Watcher) fail(err error, snap *snapshot) {
	w.mu.Lock()
	cur := w.cur.Load()
	if cur != nil && snap != nil && !snap.holds(cur) {
		w.cur.Store(nil)
	} else {
		cur = nil // nothing withdrawn
	}
	w.lastErr = err
	w.mu.Unlock()
	if cur != nil && cur.life != nil {
		w.retire(cur)
	}
	w.notify(w.cur.Load(), err)
}

// holds reports whether every non-embedded file the set serves from is
// among the snapshot's files.
func (snap snapshot) holds(s *Set) bool {
	paths := make(map[string]bool, len(snap.files))
	for _, f := range snap.files {
		paths[f.path] = true
	}
	for _, f := range s.files {
		if f.Source != SourceEmbedded && !paths[f.Path] {
			return false
		}
	}
	return true
}

func (w *Watcher) notify(set *Set, err error) {
	w.mu.Lock()
	fns := make([]func(*Set, error), 0, len(w.subs))
	for id := 0; id < w.nextSub; id++ {
		if fn, ok := w.subs[id]; ok {
			fns = append(fns, fn)
		}
	}
	w.mu.Unlock()
	for _, fn := range fns {
		fn(set, err)
	}
}

func (w *Watcher) dirs() []string {
	var out []string
	for _, d := range []string{w.src.HomeDir, w.src.RepoDir} {
		if d != "" {
			out = append(out, filepath.Clean(d))
		}
	}
	return out
}

// relevant reports whether ev may change the set: a non-hidden policy file
// or directory in a source, or an ancestor of a source.
func (w *Watcher) relevant(ev fsnotify.Event) bool {
	if ev.Op == fsnotify.Chmod {
		return false
	}
	p := filepath.Clean(ev.Name)
	for _, d := range w.dirs() {
		if strings.HasPrefix(d, p+string(filepath.Separator)) {
			return true // an ancestor of the source appeared or went
		}
		if p == d {
			return true
		}
		rel, ok := strings.CutPrefix(p, d+string(filepath.Separator))
		if !ok {
			continue
		}
		if hidden(rel) {
			return false
		}
		if strings.HasSuffix(p, ".rego") || isWasm(p) || w.watching[p] {
			return true
		}
		if ev.Has(fsnotify.Create) {
			if fi, err := os.Stat(p); err == nil && fi.IsDir() {
				return true
			}
		}
	}
	return false
}

// hidden reports whether any element of the relative path starts with a dot.
func hidden(rel string) bool {
	return strings.HasPrefix(rel, ".") || strings.Contains(rel, string(filepath.Separator)+".")
}

// sync watches each existing source and its non-hidden subfolders, or a
// missing source's nearest existing ancestor.
func (w *Watcher) sync() {
	want := map[string]bool{}
	for _, d := range w.dirs() {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			_ = filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
				if err != nil {
					return nil // gone while walking: the next event syncs again
				}
				if e.IsDir() {
					if p != d && strings.HasPrefix(e.Name(), ".") {
						return filepath.SkipDir
					}
					want[p] = true
				}
				return nil
			})
			continue
		}
		for a := filepath.Dir(d); ; a = filepath.Dir(a) {
			if fi, err := os.Stat(a); err == nil && fi.IsDir() {
				want[a] = true
				break
			}
			if a == filepath.Dir(a) {
				break
			}
		}
	}
	for p := range w.watching {
		if !want[p] {
			_ = w.fsw.Remove(p) // may already be gone with its folder
			delete(w.watching, p)
		}
	}
	for p := range want {
		if !w.watching[p] && w.fsw.Add(p) == nil {
			w.watching[p] = true
		}
	}
}
