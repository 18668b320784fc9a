package mailbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/palacehq/palace/internal/bounded"
)

// MaxBoxBytes bounds one box palace reads: a box holds short letters (at
// most MaxLineBytes each), and 256 MiB is about a million of them. Readers
// refuse a larger box (a *bounded.SizeError) instead of reading it.
const MaxBoxBytes = 256 << 20

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
// be run, a path is not tracked (ErrNotStaged), or a blob is over
// MaxBoxBytes (an *fs.PathError naming the path, around a
// *bounded.SizeError); a staged blob is streamed, never held whole.
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
		// The staged blob is streamed into the check, never held whole; the
		// check compares it with the HEAD blob as it reads, so that one is
		// read first, while git starts on the other.
		staged, err := startBlob(ctx, repoDir, ":"+spec)
		if err != nil {
			return nil, fmt.Errorf("staged check %s: %w", p, err)
		}
		base, inHead, err := gitShow(ctx, repoDir, "HEAD:"+spec)
		if errors.Is(err, bounded.ErrTooLarge) {
			staged.abort()
			return nil, &iofs.PathError{Op: "staged check", Path: p, Err: err}
		}
		if err != nil {
			staged.abort()
			return nil, fmt.Errorf("staged check %s: %w", p, err)
		}
		o := opts
		o.Base = nil
		if inHead {
			o.Base = base
			if o.Base == nil {
				o.Base = []byte{}
			}
		}
		fs, checkErr := CheckReader(ctx, p, staged.r, o)
		if checkErr != nil {
			staged.abort()
			return nil, &iofs.PathError{Op: "staged check", Path: p, Err: checkErr}
		}
		inIndex, err := staged.finish()
		if err != nil {
			return nil, fmt.Errorf("staged check %s: %w", p, err)
		}
		if !inIndex {
			if !inHead {
				return nil, fmt.Errorf("staged check %s: %w", p, ErrNotStaged)
			}
			out = append(out, newFinding(p, 0, 1, CodeHistory, SeverityError,
				"box deleted from the index; boxes are append-only: restore it (git restore --staged --worktree "+rel+")"))
			continue
		}
		out = append(out, fs...)
	}
	return out, nil
}

// blobStream is a running `git cat-file blob`, read through r, which
// fails past MaxBoxBytes.
type blobStream struct {
	ctx    context.Context
	cmd    *exec.Cmd
	rev    string
	r      io.Reader
	stderr bytes.Buffer
}

func startBlob(ctx context.Context, dir, rev string) (*blobStream, error) {
	bs := &blobStream{ctx: ctx, cmd: exec.CommandContext(ctx, "git", "cat-file", "blob", rev), rev: rev}
	bs.cmd.Dir = dir
	bs.cmd.Stderr = &bs.stderr
	out, err := bs.cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("git cat-file blob %s: %w", rev, err)
	}
	if err := bs.cmd.Start(); err != nil {
		return nil, fmt.Errorf("git cat-file blob %s: %w", rev, err)
	}
	bs.r = bounded.Reader(out, MaxBoxBytes)
	return bs, nil
}

// finish waits for git once its output is read. found is false when git
// says the blob does not exist (exit status 128); err is for git not
// running at all or dir not being a repository.
func (bs *blobStream) finish() (found bool, err error) {
	err = bs.cmd.Wait()
	// git says "not a git repository" only on stderr; that text is read
	// here, once, and becomes errNotRepository for the callers to match.
	notRepo := strings.Contains(bs.stderr.String(), "not a git repository")
	var ee *exec.ExitError
	if errors.As(err, &ee) && bs.ctx.Err() == nil && !notRepo {
		return false, nil
	}
	if err != nil && notRepo {
		err = fmt.Errorf("%w: %w", errNotRepository, err)
	}
	if err != nil {
		return false, fmt.Errorf("git cat-file blob %s: %w: %s", bs.rev, err, strings.TrimSpace(bs.stderr.String()))
	}
	return true, nil
}

// abort stops git when its output is not read to the end.
func (bs *blobStream) abort() {
	_ = bs.cmd.Process.Kill()
	_ = bs.cmd.Wait()
}

// gitShow returns the blob named by rev, at most MaxBoxBytes (a larger one
// is a *bounded.SizeError); found is false when git says it does not exist
// (exit status 128), and err is for git not running at all or dir not being
// a repository.
func gitShow(ctx context.Context, dir, rev string) (blob []byte, found bool, err error) {
	bs, err := startBlob(ctx, dir, rev)
	if err != nil {
		return nil, false, err
	}
	blob, err = io.ReadAll(bs.r)
	if err != nil {
		bs.abort()
		return nil, false, fmt.Errorf("read %s: %w", rev, err)
	}
	if found, err = bs.finish(); !found || err != nil {
		return nil, found, err
	}
	return blob, true, nil
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
