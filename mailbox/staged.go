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

// MaxBoxBytes bounds one box palace reads (about a million letters); a larger
// box is refused with a *bounded.SizeError, never read.
const MaxBoxBytes = 256 << 20

// ErrNotStaged is returned by StagedCheck for a path that is neither in the
// index nor in HEAD.
var ErrNotStaged = errors.New("not in the index")

// StagedCheck checks what is about to be committed: each path's staged blob
// (exact bytes, no textconv), streamed through Check with the HEAD blob as
// opts.Base, so rewritten history is caught (PM006). The working tree is not
// read. A box deleted from the index but present in HEAD is one PM006.
//
// paths are absolute or relative to repoDir. git runs with the caller's
// environment, so inside a hook it sees the index being committed
// (GIT_INDEX_FILE). An error means git could not run, a path is not tracked
// (ErrNotStaged), or a blob is over MaxBoxBytes (an *fs.PathError around a
// *bounded.SizeError).
func StagedCheck(ctx context.Context, repoDir string, paths []string, opts CheckOptions) ([]Finding, error) {
	var out []Finding
	for _, p := range paths {
		rel := p
		if filepath.IsAbs(p) {
			// "../" is fine below the checkout; outside it git reports ErrNotStaged.
			r, err := filepath.Rel(repoDir, p)
			if err != nil {
				return nil, fmt.Errorf("staged check %s: relative to %s: %w", p, repoDir, err)
			}
			rel = r
		}
		spec := "./" + filepath.ToSlash(rel)
		// The check compares with HEAD as it streams, so HEAD is read first.
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

// blobStream is a running `git cat-file blob`; r fails past MaxBoxBytes.
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

// finish waits for git once its output is read. found is false when the
// blob does not exist; err is for git not running or dir not being a
// repository (errNotRepository, told only on stderr).
func (bs *blobStream) finish() (found bool, err error) {
	err = bs.cmd.Wait()
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

// gitShow returns the blob named by rev, at most MaxBoxBytes (else a
// *bounded.SizeError); found and err are as for blobStream.finish.
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

var errNotRepository = errors.New("not a git repository")

// Committed returns the box at path as HEAD has it, the base for an editor's
// unsaved buffer; nil and no error when there is no such blob or checkout.
func Committed(ctx context.Context, path string) ([]byte, error) {
	blob, _, err := gitShow(ctx, filepath.Dir(path), "HEAD:./"+filepath.Base(path))
	if err != nil && ctx.Err() == nil && errors.Is(err, errNotRepository) {
		return nil, nil
	}
	return blob, err
}
