// Package repofs owns how palace writes inside a repository: every file it
// creates or appends to under a checkout (a mailbox box, a formatted policy)
// is opened relative to the repository root, one path component at a time,
// without following symbolic links. A repository's files travel with every
// clone, so a link there is untrusted: `.palace -> /home/you/.ssh` or
// `.palace/inbox.jsonl -> ~/.bashrc` would otherwise make palace write
// outside the repository. A link anywhere below the root is refused with a
// *LinkError naming it; nothing is created or written.
//
// The root itself is trusted (the caller resolved it, with git), and so is
// every directory above it: only the components of rel are checked. On
// unix the walk uses openat(2) with O_NOFOLLOW per component, so a link
// swapped in while palace runs is refused too; elsewhere each component is
// checked with Lstat first, which leaves a race window.
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
	// Path is the link, absolute (root joined with the components up to it).
	Path string
	// Target is what the link points to, as stored in it; empty if it could
	// not be read.
	Target string
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
// but is not a regular file (a FIFO would block the open, a device is not a
// box).
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

// CheckoutRoot returns the root palace writes below when it writes at dir:
// the nearest of dir (made absolute, not resolved) and its ancestors that
// holds a .git entry. ok is false when no ancestor is a checkout; the
// caller then trusts dir as the user gave it.
//
// A checkout reached through a symbolic link (~/proj -> /data/proj) is a
// root only when no checkout lies above the link: a cloned repository can
// ship `.palace -> ~/work/other`, and the other repository's .git behind
// the link must not make palace treat the link as a checkout of its own
// and write through it; the repository above is the root instead, and the
// link is refused below it. The search is lexical, so the links a user
// keeps above a checkout (~/src -> /data/src) stay theirs.
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
