package teamsync

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/palacehq/palace/cardfile"
	"github.com/palacehq/palace/store"
)

// git runs git in one worktree; sync reads card files from git objects
// only, never from the working tree.
type git struct{ dir string }

// run runs git with args and returns its standard output.
func (g git) run(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", g.dir}, args...)...)
	cmd.Env = gitEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// gitEnv keeps git from prompting, paging or taking optional locks (a
// status must not rewrite the index under the user's feet).
func gitEnv() []string {
	return append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "GIT_PAGER=cat", "LC_ALL=C")
}

// head is the checkout's HEAD commit, "" when there is none yet.
func (g git) head(ctx context.Context) string {
	out, err := g.run(ctx, "rev-parse", "--verify", "-q", "HEAD^{commit}")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// treeEntry is one path of the card directory in a tree.
type treeEntry struct {
	mode, blob string
}

// tree lists every path under cardfile.Dir in rev, whatever its kind; an
// unknown rev is an error.
func (g git) tree(ctx context.Context, rev string) (map[string]treeEntry, error) {
	out, err := g.run(ctx, "ls-tree", "-z", "-r", "--full-tree", rev, "--", cardfile.Dir+"/")
	if err != nil {
		return nil, err
	}
	m := map[string]treeEntry{}
	for _, rec := range bytes.Split(out, []byte{0}) {
		meta, path, ok := bytes.Cut(rec, []byte{'\t'})
		if !ok {
			continue
		}
		f := strings.Fields(string(meta))
		if len(f) != 3 {
			continue
		}
		m[string(path)] = treeEntry{mode: f[0], blob: f[2]}
	}
	return m, nil
}

// upstream is the upstream default branch: origin's HEAD, else origin/main,
// else origin/master, else "".
func (g git) upstream(ctx context.Context) string {
	if out, err := g.run(ctx, "symbolic-ref", "-q", "refs/remotes/origin/HEAD"); err == nil {
		ref := strings.TrimSpace(string(out))
		if _, err := g.run(ctx, "rev-parse", "--verify", "-q", ref+"^{commit}"); err == nil {
			return strings.TrimPrefix(ref, "refs/remotes/")
		}
	}
	for _, b := range []string{"origin/main", "origin/master"} {
		if _, err := g.run(ctx, "rev-parse", "--verify", "-q", "refs/remotes/"+b+"^{commit}"); err == nil {
			return b
		}
	}
	return ""
}

// unreviewed lists the commits of HEAD's history that upstream does not
// contain (every commit when there is no upstream: all is nil then).
func (g git) unreviewed(ctx context.Context, upstream string) (set map[string]bool, all bool, err error) {
	if upstream == "" {
		return nil, true, nil
	}
	out, err := g.run(ctx, "rev-list", "HEAD", "--not", "refs/remotes/"+upstream)
	if err != nil {
		return nil, false, err
	}
	set = map[string]bool{}
	for _, c := range strings.Fields(string(out)) {
		set[c] = true
	}
	return set, false, nil
}

// commit is the commit that last changed a file, and its committer time.
type commit struct {
	hash string
	time string // the palace's time format
}

// lastChanges finds the commit of HEAD's history that last changed each
// path (a merge counts when it differs from its first parent).
func (g git) lastChanges(ctx context.Context, paths map[string]bool) (map[string]commit, error) {
	out := make(map[string]commit, len(paths))
	if len(paths) == 0 {
		return out, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "-C", g.dir, "log", "-z", "--format=%x01%H %ct", "--name-only", "--no-renames",
		"--diff-merges=first-parent", "HEAD", "--", cardfile.Dir+"/")
	cmd.Env = gitEnv()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("git log: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("git log: %w", err)
	}
	defer func() {
		// Once every path is found, the rest of the history is not read.
		cancel()
		cmd.Wait() //nolint:errcheck // killed on purpose
	}()
	r := bufio.NewReaderSize(stdout, 64<<10)
	var cur commit
	for len(out) < len(paths) {
		tok, err := r.ReadBytes(0)
		if len(tok) > 0 && tok[len(tok)-1] == 0 {
			tok = tok[:len(tok)-1]
		}
		tok = bytes.TrimLeft(tok, "\n")
		if i := bytes.IndexByte(tok, 1); i >= 0 {
			f := strings.Fields(string(tok[i+1:]))
			if len(f) == 2 {
				sec, _ := strconv.ParseInt(f[1], 10, 64)
				cur = commit{hash: f[0], time: store.FormatTime(time.Unix(sec, 0))}
			}
		} else if p := string(tok); p != "" && paths[p] && cur.hash != "" {
			if _, seen := out[p]; !seen {
				out[p] = cur
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("git log: %w", err)
		}
	}
	return out, nil
}

// blobReader reads objects by id with one `git cat-file --batch` process.
type blobReader struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func (g git) blobs(ctx context.Context) (*blobReader, error) {
	cmd := exec.CommandContext(ctx, "git", "-C", g.dir, "cat-file", "--batch")
	cmd.Env = gitEnv()
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	return &blobReader{cmd: cmd, in: in, out: bufio.NewReaderSize(stdout, 256<<10)}, nil
}

// read returns at most cardfile.MaxFileBytes+1 bytes of each object, in
// order; a missing object is an error naming it.
func (b *blobReader) read(names []string) ([][]byte, error) {
	werr := make(chan error, 1)
	go func() {
		w := bufio.NewWriter(b.in)
		for _, n := range names {
			w.WriteString(n)
			w.WriteByte('\n')
		}
		werr <- w.Flush()
	}()
	out := make([][]byte, len(names))
	for i, n := range names {
		header, err := b.out.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("git cat-file %s: %w", n, err)
		}
		f := strings.Fields(header)
		if len(f) != 3 {
			return nil, &missingObjectError{name: n, header: strings.TrimSpace(header)}
		}
		size, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("git cat-file header %q", header)
		}
		keep := min(size, cardfile.MaxFileBytes+1)
		buf := make([]byte, keep)
		if _, err := io.ReadFull(b.out, buf); err != nil {
			return nil, fmt.Errorf("git cat-file %s: %w", n, err)
		}
		if _, err := b.out.Discard(int(size-keep) + 1); err != nil {
			return nil, fmt.Errorf("git cat-file %s: %w", n, err)
		}
		out[i] = buf
	}
	if err := <-werr; err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	return out, nil
}

// missingObjectError is read's error for a name git has no object for.
type missingObjectError struct{ name, header string }

func (e *missingObjectError) Error() string { return "git cat-file " + e.name + ": " + e.header }

func (b *blobReader) close() {
	b.in.Close()
	b.cmd.Wait() //nolint:errcheck // every object asked for was read
}

// worktreeChange is a card file git sees changed in the working tree.
type worktreeChange struct {
	path      string
	untracked bool
}

// changes lists the card files that are untracked, or whose working-tree
// version differs from the index or HEAD.
func (g git) changes(ctx context.Context) ([]worktreeChange, error) {
	out, err := g.run(ctx, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "--", cardfile.Dir+"/")
	if err != nil {
		return nil, err
	}
	var cs []worktreeChange
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) < 4 {
			continue
		}
		xy, path := string(rec[:2]), string(rec[3:])
		if xy == "!!" {
			continue
		}
		cs = append(cs, worktreeChange{path: path, untracked: xy == "??"})
	}
	return cs, nil
}

// objectFormat is the repository's object hash, sha1 or sha256.
func (g git) objectFormat(ctx context.Context) string {
	out, err := g.run(ctx, "rev-parse", "--show-object-format")
	if err != nil {
		return "sha1"
	}
	return strings.TrimSpace(string(out))
}

// formatOf returns the repository's object format, asked of git on the
// first call only and kept in *cache.
func (g git) formatOf(ctx context.Context, cache *string) func() string {
	return func() string {
		if *cache == "" {
			*cache = g.objectFormat(ctx)
		}
		return *cache
	}
}

// blobID is the git blob id of content b (git hash-object) in a repository
// of object format format.
func blobID(format string, b []byte) string {
	h := sha1.New()
	if format == "sha256" {
		h = sha256.New()
	}
	fmt.Fprintf(h, "blob %d\x00", len(b))
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}
