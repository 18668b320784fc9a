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
	out, err := git(ctx, dir, "status", "--porcelain=v1", "--ignored", "--untracked-files=all", "--", filepath.Base(path))
	if err != nil {
		return "", err
	}
	line := strings.TrimRight(strings.SplitN(out, "\n", 2)[0], "\r")
	switch {
	case line == "":
		if _, err := git(ctx, dir, "ls-files", "--error-unmatch", "--", filepath.Base(path)); err != nil {
			return FileUntracked, nil
		}
		return FileTracked, nil
	case strings.HasPrefix(line, "??"), strings.HasPrefix(line, "!!"):
		return FileUntracked, nil
	}
	return FileModified, nil
}
