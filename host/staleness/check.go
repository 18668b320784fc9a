package staleness

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/repofs"
	"github.com/palacehq/palace/store"
)

// State is what a look at cited code found.
type State int

const (
	// Unknown: the code could not be looked at (outside git, a file over
	// MaxFileBytes): never stale.
	Unknown State = iota
	// Fresh: the code says what it said.
	Fresh
	// Moved: the code is there, elsewhere in the file or under the name
	// git gave the file; the citation follows it.
	Moved
	// Changed: the cited lines changed or vanished, the file is gone, or
	// it no longer defines the symbol: the citation is stale.
	Changed
)

// The changes a stale citation reports (Result.Change).
const (
	ChangeLines   = "changed"        // the cited lines hold other text
	ChangeGone    = "gone"           // the file has fewer lines than were cited
	ChangeDeleted = "deleted"        // the file is gone and git saw no rename
	ChangeSymbol  = "symbol_missing" // the file no longer defines the symbol
	ChangeKind    = "not_regular"    // a link, directory or FIFO took the file's place
)

// Result is what a look at one observation found.
type Result struct {
	State State
	// Path is where the code is now: the cited path, or the name git gave
	// the file since.
	Path string
	// Start and End are the cited lines where they are now (Fresh, Moved),
	// or as cited (Changed).
	Start, End int
	// Change names what changed (Changed only), Detail says it in words:
	// "lines 3–5 changed", "the file has 2 lines, lines 3–5 are gone".
	Change, Detail string
}

// Checker looks at cited code in one repository checkout, keeping each
// file's state by identity and git's renames by commit. Safe for
// concurrent use; one per host.
type Checker struct {
	root string

	// mu guards the caches below.
	mu    sync.Mutex
	files map[string]*fileState
	// bytes is the text the files hold; past maxCachedBytes the texts go.
	bytes     int
	renames   map[string]renameEntry
	indexPath string
	reads     int
	// watched are the cited files as Changed last saw them.
	watched map[string]identity
}

// maxCachedBytes bounds the file text a Checker keeps.
const maxCachedBytes = 32 << 20

// fileState is one file as last seen.
type fileState struct {
	id      identity
	lines   []string // nil until read (or dropped)
	text    []byte   // for symbol searches; dropped with lines
	readErr error
	results map[obsKey]Result // looks at this file's observations, valid for id
}

type obsKey struct {
	ev string
	n  int
}

// identity is what says a file did not change: size, modification time,
// inode and kind. A missing file has exists false.
type identity struct {
	exists bool
	mode   fs.FileMode
	size   int64
	mtime  int64
	ino    uint64
}

type renameEntry struct {
	index identity
	m     map[string]string
}

// NewChecker checks citations against the checkout at root (its top
// level); with root "" (outside git) every look is Unknown.
func NewChecker(root string) *Checker {
	return &Checker{root: root, files: map[string]*fileState{}, renames: map[string]renameEntry{}}
}

// Root is the checkout the checker looks in.
func (c *Checker) Root() string { return c.root }

// Reads counts the file reads so far (tests and benchmarks: at most one
// per cited file per change).
func (c *Checker) Reads() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reads
}

// Pass is one round of looks (a context request) that stats each file at
// most once. Not safe for concurrent use.
type Pass struct {
	c    *Checker
	ctx  context.Context
	seen map[string]identity
}

// Pass starts a round of looks.
func (c *Checker) Pass(ctx context.Context) *Pass {
	return &Pass{c: c, ctx: ctx, seen: map[string]identity{}}
}

func (p *Pass) stat(rel string) identity {
	if id, ok := p.seen[rel]; ok {
		return id
	}
	id := lstat(filepath.Join(p.c.root, filepath.FromSlash(rel)))
	p.seen[rel] = id
	return id
}

func lstat(path string) identity {
	fi, err := os.Lstat(path)
	if err != nil {
		return identity{}
	}
	return identity{exists: true, mode: fi.Mode().Type(), size: fi.Size(), mtime: fi.ModTime().UnixNano(), ino: inode(fi)}
}

// Look checks one observation against the code now.
func (p *Pass) Look(o domain.Observation) Result {
	c := p.c
	if c.root == "" {
		return Result{State: Unknown, Path: o.Path}
	}
	rel := o.Path
	id := p.stat(rel)
	renamed := false
	if !id.exists && o.Commit != "" {
		if to := c.renamedTo(p.ctx, o.Commit, rel); to != "" {
			if nid := p.stat(to); nid.exists {
				rel, id, renamed = to, nid, true
			}
		}
	}
	if !id.exists {
		return stale(o, rel, ChangeDeleted, "the file was deleted")
	}
	if !id.mode.IsRegular() {
		return stale(o, rel, ChangeKind, "is no longer a regular file (palace does not follow links)")
	}
	r := c.look(rel, id, o)
	if renamed && r.State == Fresh {
		r.State = Moved
	}
	return r
}

func stale(o domain.Observation, rel, change, detail string) Result {
	return Result{State: Changed, Path: rel, Start: o.LineStart, End: o.LineEnd, Change: change, Detail: detail}
}

// look answers o for file rel as it is (id), from the cache when the file
// has not changed.
func (c *Checker) look(rel string, id identity, o domain.Observation) Result {
	key := obsKey{o.EvidenceID, o.N}
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.files[rel]
	if f == nil || f.id != id {
		if f != nil {
			c.bytes -= len(f.text)
		}
		f = &fileState{id: id, results: map[obsKey]Result{}}
		c.files[rel] = f
	}
	if r, ok := f.results[key]; ok {
		return r
	}
	// Even a whole file's citation is opened: a link is no repository file.
	if f.lines == nil && f.readErr == nil {
		c.read(rel, f)
	}
	var r Result
	switch {
	case f.readErr != nil:
		r = Result{State: Unknown, Path: rel}
		if errors.Is(f.readErr, repofs.ErrLink) || errors.Is(f.readErr, repofs.ErrNotRegular) {
			r = stale(o, rel, ChangeKind, "is no longer a regular file (palace does not follow links)")
		}
	case o.Kind == domain.ObservedFile:
		r = Result{State: Fresh, Path: rel}
	case o.Kind == domain.ObservedSymbol:
		r = Result{State: Fresh, Path: rel}
		if !definition(o.Symbol).Match(f.text) {
			r = stale(o, rel, ChangeSymbol, "no longer defines "+o.Symbol)
		}
	default:
		r = lookLines(f.lines, rel, o)
	}
	f.results[key] = r
	return r
}

// read loads f's text: once per file identity unless dropped for room.
func (c *Checker) read(rel string, f *fileState) {
	c.reads++
	text, err := readFile(c.root, rel)
	if err != nil {
		f.readErr = err
		return
	}
	if c.bytes+len(text) > maxCachedBytes {
		for _, g := range c.files {
			g.lines, g.text = nil, nil
		}
		c.bytes = 0
	}
	f.text, f.lines = text, splitLines(text)
	if f.lines == nil {
		f.lines = []string{}
	}
	c.bytes += len(text)
}

// lookLines finds o's lines in lines: where they were, else anywhere in
// the file (moved), else stale.
func lookLines(lines []string, rel string, o domain.Observation) Result {
	n := o.LineEnd - o.LineStart + 1
	if o.LineEnd <= len(lines) && blockHash(lines[o.LineStart-1:o.LineEnd]) == o.LinesSHA256 {
		return Result{State: Fresh, Path: rel, Start: o.LineStart, End: o.LineEnd}
	}
	for s := 0; s+n <= len(lines); s++ {
		if s == o.LineStart-1 {
			continue
		}
		if blockHash(lines[s:s+n]) == o.LinesSHA256 {
			return Result{State: Moved, Path: rel, Start: s + 1, End: s + n}
		}
	}
	span := fmt.Sprintf("lines %d–%d", o.LineStart, o.LineEnd)
	if n == 1 {
		span = fmt.Sprintf("line %d", o.LineStart)
	}
	if o.LineStart > len(lines) {
		return stale(o, rel, ChangeGone, fmt.Sprintf("%s are gone (the file has %d lines)", span, len(lines)))
	}
	if o.LineEnd > len(lines) {
		return stale(o, rel, ChangeGone, fmt.Sprintf("%s changed and the file now ends at line %d", span, len(lines)))
	}
	return stale(o, rel, ChangeLines, span+" changed")
}

// renamedTo returns the path git says rel was renamed to since commit, ""
// for none, kept per commit while the index does not change.
func (c *Checker) renamedTo(ctx context.Context, commit, rel string) string {
	c.mu.Lock()
	if c.indexPath == "" {
		c.mu.Unlock()
		out, err := exec.CommandContext(ctx, "git", "-C", c.root, "rev-parse", "--path-format=absolute", "--git-path", "index").Output()
		c.mu.Lock()
		if err == nil {
			c.indexPath = strings.TrimSpace(string(out))
		}
	}
	index := lstat(c.indexPath)
	if e, ok := c.renames[commit]; ok && e.index == index {
		c.mu.Unlock()
		return e.m[rel]
	}
	c.mu.Unlock()
	m := map[string]string{}
	out, err := exec.CommandContext(ctx, "git", "-C", c.root, "diff", "--name-status", "-M", "-z", commit, "--").Output()
	if err == nil {
		f := strings.Split(string(out), "\x00")
		for i := 0; i < len(f); i++ {
			if strings.HasPrefix(f[i], "R") && i+2 < len(f) {
				m[f[i+1]] = f[i+2]
				i += 2
			} else if strings.HasPrefix(f[i], "C") && i+2 < len(f) {
				i += 2
			} else if f[i] != "" && i+1 < len(f) {
				i++
			}
		}
	}
	c.mu.Lock()
	c.renames[commit] = renameEntry{index: index, m: m}
	c.mu.Unlock()
	return m[rel]
}

// Changed reports whether a file the citations name changed, appeared or
// went since the last call (the first reports false), one stat per file.
func (c *Checker) Changed(ctx context.Context, s *store.Store) (bool, error) {
	if c.root == "" {
		return false, nil
	}
	all, err := s.CodeCitations(ctx)
	if err != nil {
		return false, err
	}
	paths := map[string]bool{}
	for _, cits := range all {
		for _, ct := range cits {
			paths[ct.Path] = true
		}
	}
	now := make(map[string]identity, len(paths))
	for p := range paths {
		now[p] = lstat(filepath.Join(c.root, filepath.FromSlash(p)))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	prev := c.watched
	c.watched = now
	return prev != nil && !maps.Equal(prev, now), nil
}
