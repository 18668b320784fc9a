package mailbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// ErrNotStaged is returned by StagedCheck for a path that is neither in the
// index nor in HEAD.
var ErrNotStaged = errors.New("not in the index")

// StagedCheck checks what is about to be committed: for each path it reads
// the staged blob (`git cat-file blob :path`, the exact bytes, no textconv)
// and the HEAD blob (`HEAD:path`; absent for a new file or before the first
// commit) and runs
// Check with the HEAD bytes as opts.Base, so rewritten history is caught
// (PM006). The working tree is not read: unstaged edits are not what is
// committed. A box deleted from the index but present in HEAD is one PM006.
//
// paths are relative to repoDir (as pre-commit passes them; repoDir may be a
// subdirectory of the checkout) or absolute.
// git runs with the caller's environment, so inside a hook it sees the index
// git is committing (GIT_INDEX_FILE), also for `git commit -a` and partial
// commits. Findings carry the paths as given. An error means git could not
// be run or a path is not tracked (ErrNotStaged).
func StagedCheck(ctx context.Context, repoDir string, paths []string, opts CheckOptions) ([]Finding, error) {
	var out []Finding
	for _, p := range paths {
		rel := p
		if filepath.IsAbs(p) {
			// "../" is fine when repoDir is a subdirectory of the checkout;
			// a path outside the repository is one git does not know
			// (ErrNotStaged).
			r, err := filepath.Rel(repoDir, p)
			if err != nil {
				return nil, fmt.Errorf("staged check %s: relative to %s: %w", p, repoDir, err)
			}
			rel = r
		}
		spec := "./" + filepath.ToSlash(rel)
		// The two blobs are read at once: for a 30 MB box each git process
		// takes ~90 ms, mostly piping, and the reads are independent.
		var (
			base    []byte
			inHead  bool
			headErr error
			wg      sync.WaitGroup
		)
		wg.Go(func() { base, inHead, headErr = gitShow(ctx, repoDir, "HEAD:"+spec) })
		staged, inIndex, err := gitShow(ctx, repoDir, ":"+spec)
		wg.Wait()
		if err == nil {
			err = headErr
		}
		if err != nil {
			return nil, fmt.Errorf("staged check %s: %w", p, err)
		}
		if !inIndex {
			if !inHead {
				return nil, fmt.Errorf("staged check %s: %w", p, ErrNotStaged)
			}
			out = append(out, Finding{Path: p, Line: 1, Col: 1, Code: CodeHistory, Severity: SeverityError,
				Message: "box deleted from the index; boxes are append-only: restore it (git restore --staged --worktree " + rel + ")"})
			continue
		}
		o := opts
		o.Base = nil
		if inHead {
			o.Base = base
			if o.Base == nil {
				o.Base = []byte{}
			}
		}
		out = append(out, Check(ctx, p, staged, o)...)
	}
	return out, nil
}

// gitShow returns the blob named by rev; found is false when git says it
// does not exist (exit status 128), and err is for git not running at all
// or dir not being a repository.
func gitShow(ctx context.Context, dir, rev string) (blob []byte, found bool, err error) {
	cmd := exec.CommandContext(ctx, "git", "cat-file", "blob", rev)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	// git says "not a git repository" only on stderr; that text is read
	// here, once, and becomes errNotRepository for the callers to match.
	notRepo := strings.Contains(stderr.String(), "not a git repository")
	var ee *exec.ExitError
	if errors.As(err, &ee) && ctx.Err() == nil && !notRepo {
		return nil, false, nil
	}
	if err != nil && notRepo {
		err = fmt.Errorf("%w: %w", errNotRepository, err)
	}
	if err != nil {
		return nil, false, fmt.Errorf("git cat-file blob %s: %w: %s", rev, err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), true, nil
}

// errNotRepository is git refusing because the directory is not in a
// checkout.
var errNotRepository = errors.New("not a git repository")

// Committed returns the box at path as HEAD has it: the base an editor's
// unsaved buffer is checked against for append-only history. It returns nil
// and no error when the file is not in HEAD, there is no HEAD yet, or the
// directory is not a git checkout.
func Committed(ctx context.Context, path string) ([]byte, error) {
	blob, found, err := gitShow(ctx, filepath.Dir(path), "HEAD:./"+filepath.Base(path))
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, errNotRepository) {
			return nil, nil
		}
		return nil, err
	}
	if !found {
		return nil, nil
	}
	return blob, nil
}
