package anchor

import (
	"context"
	"path/filepath"
	"strings"
)

// The states FileState reports.
const (
	FileTracked   = "tracked"   // committed, unchanged since
	FileModified  = "modified"  // changes not committed, or staged but never committed
	FileUntracked = "untracked" // not tracked, ignored included
)

// FileState says how git sees the file at path; outside any checkout it is
// FileUntracked. An error running git is returned as is.
func FileState(ctx context.Context, path string) (string, error) {
	dir := filepath.Dir(path)
	if _, err := git(ctx, dir, "rev-parse", "--is-inside-work-tree"); err != nil {
		return FileUntracked, nil
	}
	return fileState(ctx, dir, filepath.Base(path))
}

// FileStateIn says how the repository at root sees rel, a link-free path
// below it; a file of a nested repository is not root's.
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
