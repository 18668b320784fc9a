package host

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/palacehq/palace/repofs"
)

// WritePolicyFiles writes files (slash names relative to dir → content)
// under dir in name order and returns their paths. Inside a git checkout
// nothing is written through a symbolic link from the checkout's root down,
// since a cloned repository can ship `.palace/policies -> ~/.config`;
// outside one only the names below dir are held to that. Every file is
// checked first: a link or non-regular file on the way, or an existing file
// without replace, is KindInvalid naming it and the fix, and nothing is
// written. replace swaps a file whole by rename, keeping its permissions.
func WritePolicyFiles(dir string, files map[string][]byte, replace bool) ([]string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, invalid("out", "--out %s: %v", dir, err)
	}
	base, prefix := abs, "."
	if root, ok := repofs.CheckoutRoot(abs); ok {
		base = root
		if prefix, err = filepath.Rel(root, abs); err != nil {
			return nil, internal(err, "locate %s in %s", abs, root)
		}
	} else if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, invalid("out", "--out %s cannot be created: %v: pass a writable folder", dir, err)
	}
	names := slices.Sorted(maps.Keys(files))
	rels := make([]string, len(names))
	paths := make([]string, len(names))
	for i, n := range names {
		rels[i] = filepath.Join(prefix, filepath.FromSlash(n))
		paths[i] = filepath.Join(dir, filepath.FromSlash(n))
		f, err := repofs.OpenFile(base, rels[i], os.O_RDONLY, 0)
		switch {
		case err == nil:
			f.Close()
			if !replace {
				return nil, invalid("out", "%s already exists: remove it or pass another --out", paths[i])
			}
		case errors.Is(err, fs.ErrNotExist):
		default:
			return nil, policyWriteError(paths[i], err)
		}
	}
	for i, n := range names {
		if d := filepath.Dir(rels[i]); d != "." {
			if err := repofs.MkdirAll(base, d); err != nil {
				return nil, policyWriteError(filepath.Dir(paths[i]), err)
			}
		}
		if replace {
			err = repofs.WriteFileAtomic(base, rels[i], files[n], 0o644)
		} else {
			err = createFile(base, rels[i], files[n])
		}
		if err != nil {
			return nil, policyWriteError(paths[i], err)
		}
	}
	return paths, nil
}

// ReplacePolicyFile replaces the file at path with b by rename, so a watcher
// sees the old file or the new one. A symbolic link on the way inside a
// checkout, or as the file elsewhere, or a non-regular file, is KindInvalid.
func ReplacePolicyFile(path string, b []byte) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return invalid("PATH", "%s: %v", path, err)
	}
	base, rel := filepath.Dir(abs), filepath.Base(abs)
	if root, ok := repofs.CheckoutRoot(base); ok {
		if r, err := filepath.Rel(root, abs); err == nil {
			base, rel = root, r
		}
	}
	if err := repofs.WriteFileAtomic(base, rel, b, 0o644); err != nil {
		return policyWriteError(path, err)
	}
	return nil
}

// createFile creates rel below root, failing if anything is there already
// (O_EXCL: a dangling link planted since the check is refused too).
func createFile(root, rel string, b []byte) error {
	f, err := repofs.OpenFile(root, rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, werr := f.Write(b)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	return werr
}

// policyWriteError classifies a failed policy write: a link or a path that
// is not a regular file is bad input (the error names it and the fix),
// anything else an internal error.
func policyWriteError(path string, err error) error {
	if errors.Is(err, repofs.ErrLink) || errors.Is(err, repofs.ErrNotRegular) || errors.Is(err, fs.ErrExist) {
		return &Error{Kind: KindInvalid, Field: "out", Msg: fmt.Sprintf("write %s", path), Err: err}
	}
	if errors.Is(err, syscall.ENOTDIR) {
		return invalid("out", "write %s: a file stands where a folder of it goes: pass another --out", path)
	}
	return internal(err, "write %s", path)
}
