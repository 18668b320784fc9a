// Package anchor derives palace's persistence anchors from the filesystem and git.
//
// It owns the rules of anchoring: the repo anchor is the normalized origin
// remote (github.com/org/name) or, without one, the main worktree's top-level
// path; the worktree anchor is the canonical checkout path; outside git only
// the global anchor exists. It runs git as a subprocess and must not touch the
// store or any policy.
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
	// Dir is the canonical directory that was resolved.
	Dir string `json:"dir"`
	// InGit is false outside any git checkout; then only the global anchor exists.
	InGit bool `json:"in_git"`
	// Worktree is the canonical top-level path of the checkout (symlinks resolved).
	Worktree string `json:"worktree,omitempty"`
	// RepoRoot is the top-level path of the repository's main worktree (or the
	// bare repository directory): the same for every worktree of one repository.
	RepoRoot string `json:"repo_root,omitempty"`
	// Remote is the origin URL as configured, empty without one.
	Remote string `json:"remote,omitempty"`
	// RepoIdentity is the normalized remote, or RepoRoot without a remote.
	RepoIdentity string `json:"repo_identity,omitempty"`
	// RepoAliases are other identities the palace holds this repository
	// under: spellings of its remote in another case on a host whose paths
	// ignore case, recorded before palace folded them (see Reconcile). Their
	// anchors are visible and changeable from here like the repo anchor;
	// new rows go to RepoIdentity's.
	RepoAliases []string `json:"repo_aliases,omitempty"`
}

// Identity returns the stable identity string of the anchor of kind k at this
// location: "global", "repo:<identity>" or "worktree:<path>". Outside git every
// kind falls back to the global identity.
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

// Resolve derives the location of dir. A dir that is not inside git resolves
// to a global-only Location without error; a missing dir is ErrNoDir; git
// missing from PATH is treated as "not inside git".
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
	// The remote is asked for beside rev-parse, not after it: every palace
	// command resolves its anchors, and two git processes at once wait
	// about as long as one. Outside git its answer is dropped.
	var (
		remote    string
		remoteErr error
		asked     sync.WaitGroup
	)
	asked.Go(func() { remote, remoteErr = git(ctx, canon, "config", "--get", "remote.origin.url") })
	defer asked.Wait() // never left running past Resolve
	out, err := git(ctx, canon, "rev-parse", "--path-format=absolute", "--show-toplevel", "--git-common-dir")
	if err != nil {
		// Not a repository (or no git at all): only the global anchor exists.
		return loc, nil
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

// Canonical returns the absolute path of p with symlinks resolved as far as
// the path exists (a path that does not exist yet keeps its unresolved tail).
func Canonical(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("canonical path of %s: %w", p, err)
	}
	if resolved, err := filepath.EvalSymlinks(abs); err == nil {
		return resolved, nil
	}
	// Resolve the longest existing prefix so a new file under a symlinked
	// directory still maps to the canonical directory.
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

// caseInsensitiveHosts are git hosts whose owner and repository names
// ignore case (github.com/ACME/X and github.com/acme/x are one repository):
// their paths are folded to lower case. Elsewhere a path keeps its case,
// since a self-hosted server may tell the two apart.
var caseInsensitiveHosts = map[string]bool{"github.com": true, "gitlab.com": true, "bitbucket.org": true}

// NormalizeRemote turns a git remote URL into host/path form:
// git@github.com:Org/Name.git, https://user@github.com/Org/Name and
// ssh://git@github.com:22/Org/Name.git all become github.com/org/name. The
// host is lowercased; the path is lowercased on hosts whose paths ignore
// case (GitHub, GitLab.com, Bitbucket) and kept elsewhere. Local paths and
// file:// URLs return "" so the caller falls back to the repository path.
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

// FoldsCase says whether a repository identity (RepoIdentity) is of a host
// whose paths ignore case, so that a palace may hold the repository under
// other spellings recorded before they were folded.
func FoldsCase(repoIdentity string) bool {
	host, _, ok := strings.Cut(repoIdentity, "/")
	return ok && caseInsensitiveHosts[host]
}

// Reconcile settles the repository identity against the spellings a palace
// already holds for it. known are the identities of the palace's repo
// anchors equal to l.RepoIdentity but for case (without the "repo:"
// prefix), oldest first. When l.RepoIdentity is among them, or there are
// none, it stays; otherwise the oldest known spelling becomes the
// identity, so cards recorded under it keep serving this checkout. Every
// other known spelling becomes an alias (RepoAliases): visible from here,
// never written to.
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
