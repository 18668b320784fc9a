package anchor

import (
	"context"
	"path/filepath"
	"strings"
)

// The states FileState reports.
const (
	// FileTracked is a file committed and unchanged since.
	FileTracked = "tracked"
	// FileModified is a tracked file with changes not committed (staged or
	// not), or a new file staged but never committed.
	FileModified = "modified"
	// FileUntracked is a file git does not track (ignored files included).
	FileUntracked = "untracked"
)

// FileState says how git sees the file at path: FileTracked, FileModified
// or FileUntracked. A path outside any git checkout is FileUntracked; an
// error running git is returned as is.
func FileState(ctx context.Context, path string) (string, error) {
	dir := filepath.Dir(path)
	if _, err := git(ctx, dir, "rev-parse", "--is-inside-work-tree"); err != nil {
		return FileUntracked, nil
	}
	return fileState(ctx, dir, filepath.Base(path))
}

// FileStateIn says how the repository whose top level is root sees rel, a
// path below root without symbolic links on its way (both as
// filepath.EvalSymlinks leaves them): a file of a repository nested in
// root is not root's (FileUntracked, or an error from git). An error
// running git is returned as is.
func FileStateIn(ctx context.Context, root, rel string) (string, error) {
	return fileState(ctx, root, filepath.ToSlash(rel))
}

// fileState asks git, run in dir, how it sees the pathspec rel.
func fileState(ctx context.Context, dir, rel string) (string, error) {
	out, err := git(ctx, dir, "status", "--porcelain=v1", "--ignored", "--untracked-files=all", "--", rel)
	if err != nil {
		return "", err
	}
	line := strings.TrimRight(strings.SplitN(out, "\n", 2)[0], "\r")
	switch {
	case line == "":
		if _, err := git(ctx, dir, "ls-files", "--error-unmatch", "--", rel); err != nil {
			return FileUntracked, nil
		}
		return FileTracked, nil
	case strings.HasPrefix(line, "??"), strings.HasPrefix(line, "!!"):
		return FileUntracked, nil
	}
	return FileModified, nil
}
