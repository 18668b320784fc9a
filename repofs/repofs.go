// Package repofs owns how palace writes inside a repository: every file is
// opened from the repository root one component at a time without following
// symbolic links. A clone's links are untrusted (`.palace -> ~/.ssh`), so a
// link below the root is refused with a *LinkError and nothing is written.
//
// The root and the directories above it are trusted; only rel's components
// are checked. On unix openat(2) with O_NOFOLLOW also refuses a link swapped
// in meanwhile; elsewhere an Lstat first leaves a race window.
package repofs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrLink is matched (errors.Is) by a *LinkError.
var ErrLink = errors.New("symbolic link inside the repository")

// LinkError refuses a path inside a repository that is, or passes through,
// a symbolic link.
type LinkError struct {
	Path   string // the link, absolute
	Target string // as stored in the link; empty if unreadable
}

func (e *LinkError) Error() string {
	to := ""
	if e.Target != "" {
		to = " -> " + e.Target
	}
	return fmt.Sprintf("%s%s is a symbolic link: palace does not follow a link where it reads or writes files "+
		"a repository or a tool may have planted; replace it with a regular file or directory (rm %s) and run again", e.Path, to, e.Path)
}

// Is makes errors.Is(err, ErrLink) true.
func (e *LinkError) Is(target error) bool { return target == ErrLink }

// ErrNotRegular is matched (errors.Is) by the error for a path that exists
// but is not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// split cleans rel and returns its components. rel must be relative and
// stay below the root.
func split(root, rel string) ([]string, error) {
	if root == "" {
		return nil, fmt.Errorf("repofs: empty root")
	}
	c := filepath.Clean(rel)
	if filepath.IsAbs(c) || c == "." || c == ".." || strings.HasPrefix(c, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("repofs: %q is not a path below %s", rel, root)
	}
	return strings.Split(c, string(filepath.Separator)), nil
}

// CheckoutRoot returns the root palace writes below at dir: the nearest of
// dir (absolute, unresolved) and its ancestors holding a .git entry; ok is
// false when there is none, and the caller trusts dir as given.
//
// A checkout reached through a symbolic link is a root only with no
// checkout above it: a clone's `.palace -> ~/work/other` must not pass as a
// checkout of its own. The search is lexical, so a user's links above a
// checkout stay theirs.
func CheckoutRoot(dir string) (root string, ok bool) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", false
	}
	linked := "" // the nearest checkout reached through a link, if any
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			st, err := os.Lstat(d)
			switch {
			case err == nil && st.Mode()&os.ModeSymlink == 0:
				return d, true
			case linked == "":
				linked = d
			}
		}
		if filepath.Dir(d) == d {
			return linked, linked != ""
		}
	}
}
