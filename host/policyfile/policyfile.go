// Package policyfile says how git sees the policy file that took a decision
// and holds the floor built on it: a repo policy file git does not hold as
// committed cannot make a card authoritative, since any tool that writes
// files can drop a policy into a checkout. It reads git and the policy
// folder only; it must not load or evaluate policies or decide a gate.
package policyfile

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/palacehq/palace/anchor"
	"github.com/palacehq/palace/internal/hosterr"
	"github.com/palacehq/palace/policies"
	"github.com/palacehq/palace/repofs"
)

// Stamp sets d.FileState: how git sees the repo policy file that
// decided (tracked, modified, untracked), "home" for the palace home's own
// policies, nothing for the embedded defaults.
func Stamp(ctx context.Context, d *policies.Decision) {
	switch d.Source {
	case policies.SourceHome:
		d.FileState = "home"
	case policies.SourceRepo:
		d.FileState = State(ctx, d.File)
	}
}

// StampCached is Stamp for the context path: git is asked at most once per
// fileStateTTL while the file is unchanged. Lifecycle decisions ask every
// time.
func (c *Cache) StampCached(ctx context.Context, d *policies.Decision) {
	if d.Source != policies.SourceRepo || d.File == "" {
		Stamp(ctx, d)
		return
	}
	fi, err := os.Stat(d.File)
	if err != nil {
		d.FileState = "unknown"
		return
	}
	key := fmt.Sprintf("%s|%d|%d", d.File, fi.Size(), fi.ModTime().UnixNano())
	now := time.Now()
	c.mu.Lock()
	e, ok := c.m[key]
	c.mu.Unlock()
	if ok && now.Sub(e.at) < fileStateTTL {
		d.FileState = e.state
		return
	}
	d.FileState = State(ctx, d.File)
	c.mu.Lock()
	if c.m == nil || len(c.m) > 64 {
		c.m = map[string]fileStateEntry{}
	}
	c.m[key] = fileStateEntry{state: d.FileState, at: now}
	c.mu.Unlock()
}

// fileStateTTL bounds how stale a cached policy file state may be (a
// commit changes it without touching the file).
const fileStateTTL = 2 * time.Second

type fileStateEntry struct {
	state string
	at    time.Time
}

// Cache remembers the states of repo policy files for StampCached. The
// zero value is ready; it is safe for concurrent use.
type Cache struct {
	mu sync.Mutex
	m  map[string]fileStateEntry
}

// State is how git sees a repo policy file, "unknown" when git cannot say.
// A symbolic link is tracked only if its target is tracked and unmodified in
// the same repository, and untracked if it leads out of the checkout: a
// committed `gate.rego -> elsewhere` must not lend the team's review to a
// file nobody committed.
func State(ctx context.Context, path string) string {
	if path == "" {
		return "unknown"
	}
	st, err := anchor.FileState(ctx, path)
	if err != nil {
		return "unknown"
	}
	if st != anchor.FileTracked {
		return st
	}
	return resolvedState(ctx, path)
}

// resolvedState is the state of the file a tracked path resolves to.
func resolvedState(ctx context.Context, path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "unknown"
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "unknown"
	}
	if real == abs {
		return anchor.FileTracked // no link on the way
	}
	root, ok := repofs.CheckoutRoot(filepath.Dir(abs))
	if !ok {
		return anchor.FileUntracked
	}
	canon, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "unknown"
	}
	rel, err := filepath.Rel(canon, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return anchor.FileUntracked // out of the repository
	}
	st, err := anchor.FileStateIn(ctx, canon, rel)
	if err != nil {
		return "unknown"
	}
	return st
}

// Floor refuses a decision taken by a repo policy file git does
// not hold as committed, unless allowLocal: any tool that writes files can
// drop a policy into a checkout.
func Floor(d policies.Decision, allowLocal bool) string {
	if allowLocal || d.Source != policies.SourceRepo {
		return ""
	}
	switch d.FileState {
	case anchor.FileTracked:
		return ""
	case anchor.FileUntracked, anchor.FileModified:
		return fmt.Sprintf("floor: the deciding policy %s (%s%s) is %s in git: a local policy change cannot make a card authoritative; commit it for review, or pass --allow-local-policy", d.Point.Package(), d.File, resolvesTo(d.File), d.FileState)
	}
	return fmt.Sprintf("floor: git cannot say whether the deciding policy %s (%s) is committed: commit it, or pass --allow-local-policy", d.Point.Package(), d.File)
}

// resolvesTo says where a policy path that passes through a symbolic link
// leads (" -> /real/path"), or "".
func resolvesTo(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
		return " -> " + real
	}
	return ""
}

// LocalChange is a repo policy file that differs from what git holds
// committed.
type LocalChange struct {
	Path  string `json:"path"`
	State string `json:"state"`
}

// LocalChanges lists the repo policy files in dir (the checkout's
// .palace/policies) that are untracked or modified: a decision
// they take is refused for promotion without --allow-local-policy.
func LocalChanges(ctx context.Context, dir string) ([]LocalChange, error) {
	if dir == "" {
		return nil, nil
	}
	files, err := policies.ListSourceFiles(dir)
	if err != nil {
		return nil, hosterr.Internal(err, "list policies in %s", dir)
	}
	var out []LocalChange
	for _, f := range files {
		if st := State(ctx, f); st != anchor.FileTracked {
			out = append(out, LocalChange{Path: f, State: st})
		}
	}
	return out, nil
}
