package mailbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/palacehq/palace/anchor"
)

// RegisteredBox is a repository box palace knows about, so Sweep can find it.
type RegisteredBox struct {
	Path     string `json:"path"` // <RepoRoot>/.palace/inbox.jsonl
	RepoRoot string `json:"repo_root"`
	// RepoIdentity lets letters naming a remote find a local checkout.
	RepoIdentity string `json:"repo_identity,omitempty"`
	AddedAt      string `json:"added_at"`
}

type registryFile struct {
	Version int             `json:"version"`
	Boxes   []RegisteredBox `json:"boxes"`
}

const registryVersion = 1

// Boxes returns the registered boxes, sorted by path. A missing registry is
// empty; a corrupt one is an error naming the file.
func (m *Mailbox) Boxes() ([]RegisteredBox, error) {
	b, err := os.ReadFile(m.RegistryPath())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read box registry: %w", err)
	}
	var rf registryFile
	if err := json.Unmarshal(b, &rf); err != nil {
		return nil, fmt.Errorf("read box registry %s: %w (delete it to start over; palace re-registers boxes on distribute)", m.RegistryPath(), err)
	}
	if rf.Version > registryVersion {
		return nil, fmt.Errorf("read box registry %s: version %d is newer than this palace knows (%d)", m.RegistryPath(), rf.Version, registryVersion)
	}
	sort.Slice(rf.Boxes, func(i, j int) bool { return rf.Boxes[i].Path < rf.Boxes[j].Path })
	return rf.Boxes, nil
}

// Register adds the box of the repository containing dir to the registry
// (the box file itself is not created). It is idempotent.
func (m *Mailbox) Register(ctx context.Context, dir string) (RegisteredBox, error) {
	loc, err := anchor.Resolve(ctx, dir)
	if err != nil {
		return RegisteredBox{}, fmt.Errorf("register box: %w", err)
	}
	root, reason := boxRoot(loc)
	if reason != "" {
		return RegisteredBox{}, fmt.Errorf("register box for %s: %s", dir, reason)
	}
	unlock, err := m.lock()
	if err != nil {
		return RegisteredBox{}, err
	}
	defer unlock()
	rb := RegisteredBox{Path: BoxPath(root), RepoRoot: root, RepoIdentity: loc.RepoIdentity}
	if err := m.addBoxes([]RegisteredBox{rb}); err != nil {
		return RegisteredBox{}, err
	}
	return rb, nil
}

func (m *Mailbox) lock() (func(), error) {
	if err := os.MkdirAll(m.Home, 0o700); err != nil {
		return nil, fmt.Errorf("lock mailbox: %w", err)
	}
	return lockFile(filepath.Join(m.Home, lockFileName))
}

// addBoxes merges boxes into the registry (caller holds the lock) and
// rewrites it atomically (temp file + rename) only if something changed.
func (m *Mailbox) addBoxes(add []RegisteredBox) error {
	have, err := m.Boxes()
	if err != nil {
		return err
	}
	byPath := map[string]int{}
	for i, b := range have {
		byPath[b.Path] = i
	}
	changed := false
	for _, b := range add {
		if i, ok := byPath[b.Path]; ok {
			if have[i].RepoIdentity != b.RepoIdentity && b.RepoIdentity != "" {
				have[i].RepoIdentity, changed = b.RepoIdentity, true
			}
			continue
		}
		b.AddedAt = m.now().UTC().Format("2006-01-02T15:04:05.000Z07:00")
		byPath[b.Path] = len(have)
		have = append(have, b)
		changed = true
	}
	if !changed {
		return nil
	}
	sort.Slice(have, func(i, j int) bool { return have[i].Path < have[j].Path })
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(registryFile{Version: registryVersion, Boxes: have}); err != nil {
		return fmt.Errorf("write box registry: %w", err)
	}
	return writeAtomic(m.RegistryPath(), buf.Bytes())
}

// writeAtomic replaces path with b; readers never see a partial file.
func writeAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// boxRoot is the directory whose .palace/inbox.jsonl is the repository's
// box — the main worktree's root — or why there is none.
func boxRoot(loc anchor.Location) (root, reason string) {
	if !loc.InGit {
		return "", "not inside a git checkout (a bare repository has no worktree to hold a box)"
	}
	if _, err := os.Stat(filepath.Join(loc.RepoRoot, ".git")); err != nil {
		return "", "bare repository: it has no worktree to hold a box"
	}
	return loc.RepoRoot, ""
}
