// Package anchor derives palace's persistence anchors from the filesystem and
// git: the repo anchor is the normalized origin remote or, without one, the
// main worktree's path; the worktree anchor is the canonical checkout path;
// outside git only the global anchor exists. It runs git and must not touch
// the store or any policy.
package anchor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/palacehq/palace/domain"
)

// GlobalIdentity is the identity of the single global anchor.
const GlobalIdentity = "global"

// Location is what a directory resolves to.
type Location struct {
	Dir      string `json:"dir"`                // canonical
	InGit    bool   `json:"in_git"`             // false: only the global anchor exists
	Worktree string `json:"worktree,omitempty"` // the checkout's canonical top level
	// RepoRoot is the main worktree's top level (or the bare repository),
	// the same for every worktree of one repository.
	RepoRoot     string `json:"repo_root,omitempty"`
	Remote       string `json:"remote,omitempty"`        // origin as configured
	RepoIdentity string `json:"repo_identity,omitempty"` // normalized remote, else RepoRoot
	// RepoAliases are other case spellings the palace holds the repository
	// under (see Reconcile): visible from here, never written to.
	RepoAliases []string `json:"repo_aliases,omitempty"`
}

// Identity is the anchor identity of kind k here: "global", "repo:<identity>"
// or "worktree:<path>"; outside git always "global".
func (l Location) Identity(k domain.AnchorKind) string {
	if !l.InGit {
		return GlobalIdentity
	}
	switch k {
	case domain.AnchorRepo:
		return "repo:" + l.RepoIdentity
	case domain.AnchorWorktree:
		return "worktree:" + l.Worktree
	}
	return GlobalIdentity
}

// Innermost is the default anchor kind for new records: worktree inside git,
// global outside.
func (l Location) Innermost() domain.AnchorKind {
	if l.InGit {
		return domain.AnchorWorktree
	}
	return domain.AnchorGlobal
}

// ErrNoDir is returned when the directory to resolve does not exist.
var ErrNoDir = errors.New("no such directory")

// Resolve derives the location of dir. Outside git, or without git on PATH,
// it is global-only and no error; a missing dir is ErrNoDir.
func Resolve(ctx context.Context, dir string) (Location, error) {
	canon, err := Canonical(dir)
	if err != nil {
		return Location{}, err
	}
	st, err := os.Stat(canon)
	if err != nil {
		return Location{}, fmt.Errorf("resolve anchor for %s: %w", dir, ErrNoDir)
	}
	if !st.IsDir() {
		canon = filepath.Dir(canon)
	}
	loc := Location{Dir: canon}
	// The remote is asked beside rev-parse: every command resolves anchors.
	var (
		remote    string
		remoteErr error
		asked     sync.WaitGroup
	)
	asked.Go(func() { remote, remoteErr = git(ctx, canon, "config", "--get", "remote.origin.url") })
	defer asked.Wait() // never left running past Resolve
	out, err := git(ctx, canon, "rev-parse", "--path-format=absolute", "--show-toplevel", "--git-common-dir")
	if err != nil {
		return loc, nil // not a repository, or no git
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 2 {
		return loc, nil
	}
	top, common := lines[0], lines[1]
	if top == "" {
		// Inside a .git directory or a bare repository: no worktree.
		return loc, nil
	}
	if loc.Worktree, err = Canonical(top); err != nil {
		return Location{}, err
	}
	common, err = Canonical(common)
	if err != nil {
		return Location{}, err
	}
	if filepath.Base(common) == ".git" {
		loc.RepoRoot = filepath.Dir(common)
	} else {
		loc.RepoRoot = common
	}
	loc.InGit = true
	if asked.Wait(); remoteErr == nil {
		loc.Remote = strings.TrimSpace(remote)
	}
	if n := NormalizeRemote(loc.Remote); n != "" {
		loc.RepoIdentity = n
	} else {
		loc.RepoIdentity = loc.RepoRoot
	}
	return loc, nil
}

// Canonical returns p absolute, with symlinks resolved as far as it exists.
func Canonical(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("canonical path of %s: %w", p, err)
	}
	if resolved, err := filepath.EvalSymlinks(abs); err == nil {
		return resolved, nil
	}
	dir, rest := filepath.Dir(abs), filepath.Base(abs)
	for dir != filepath.Dir(dir) {
		if resolved, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(resolved, rest), nil
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = filepath.Dir(dir)
	}
	return abs, nil
}

// caseInsensitiveHosts are git hosts whose paths ignore case, folded to lower
// case; a self-hosted server may tell cases apart, so elsewhere they stay.
var caseInsensitiveHosts = map[string]bool{"github.com": true, "gitlab.com": true, "bitbucket.org": true}

// NormalizeRemote turns a git remote URL into host/path form
// (git@github.com:Org/Name.git → github.com/org/name), the host lowercased
// and the path too on caseInsensitiveHosts. Local paths and file:// URLs
// return "".
func NormalizeRemote(raw string) string {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return ""
	}
	var host, path string
	switch {
	case strings.Contains(raw, "://"):
		u, err := url.Parse(raw)
		if err != nil || u.Scheme == "file" || u.Host == "" {
			return ""
		}
		host, path = u.Hostname(), u.Path
	case strings.HasPrefix(raw, "/") || strings.HasPrefix(raw, "."):
		return ""
	default:
		// scp-like syntax: [user@]host:path
		colon := strings.Index(raw, ":")
		if colon < 0 {
			return ""
		}
		at := strings.LastIndex(raw[:colon], "@")
		host, path = raw[at+1:colon], raw[colon+1:]
	}
	path = strings.Trim(path, "/")
	path = strings.TrimSuffix(path, ".git")
	path = strings.TrimSuffix(path, "/")
	if host == "" || path == "" {
		return ""
	}
	host = strings.ToLower(host)
	if caseInsensitiveHosts[host] {
		path = strings.ToLower(path)
	}
	return host + "/" + path
}

// FoldsCase says whether a RepoIdentity's host ignores case, so the palace
// may hold it under other spellings.
func FoldsCase(repoIdentity string) bool {
	host, _, ok := strings.Cut(repoIdentity, "/")
	return ok && caseInsensitiveHosts[host]
}

// Reconcile settles the identity against known, the palace's repo
// identities equal to it but for case, oldest first: it stays if among them
// (or known is empty), else the oldest becomes it, so its cards keep
// serving; the others become RepoAliases.
func (l Location) Reconcile(known []string) Location {
	if !l.InGit || len(known) == 0 {
		return l
	}
	primary := known[0]
	for _, k := range known {
		if k == l.RepoIdentity {
			primary = k
		}
	}
	l.RepoIdentity, l.RepoAliases = primary, nil
	for _, k := range known {
		if k != primary {
			l.RepoAliases = append(l.RepoAliases, k)
		}
	}
	return l
}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	// A user's GIT_DIR would point every lookup at one repository.
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return k == "GIT_DIR" || k == "GIT_WORK_TREE" || k == "GIT_INDEX_FILE"
	}), "GIT_OPTIONAL_LOCKS=0")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}
