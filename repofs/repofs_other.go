//go:build !unix

package repofs

import (
	"fmt"
	"os"
	"path/filepath"
)

// OpenFile is the unix OpenFile with each component checked by Lstat before
// the open, so a link swapped in between is not caught.
func OpenFile(root, rel string, flag int, perm os.FileMode) (*os.File, error) {
	path, err := check(root, rel, flag&os.O_CREATE != 0)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, flag, perm)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: %w: palace writes only regular files inside a repository; remove it and run again", path, ErrNotRegular)
	}
	return f, nil
}

// WriteFileAtomic replaces rel below root with b through a temporary file
// and a rename; no component may be a link.
func WriteFileAtomic(root, rel string, b []byte, perm os.FileMode) error {
	path, err := check(root, rel, false)
	if err != nil {
		return err
	}
	if st, err := os.Lstat(path); err == nil {
		if !st.Mode().IsRegular() {
			return fmt.Errorf("%s: %w", path, ErrNotRegular)
		}
		perm = st.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(b)
	if werr == nil {
		werr = tmp.Chmod(perm)
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		return fmt.Errorf("write %s: %w", path, werr)
	}
	return nil
}

// MkdirAll creates the directory rel below root and missing parents,
// refusing a link among rel's components (*LinkError).
func MkdirAll(root, rel string) error {
	_, err := check(root, filepath.Join(rel, "x"), true)
	return err
}

// check refuses a link among rel's components and creates missing parent
// directories when create is set.
func check(root, rel string, create bool) (string, error) {
	comps, err := split(root, rel)
	if err != nil {
		return "", err
	}
	path := root
	for i, c := range comps {
		path = filepath.Join(path, c)
		st, err := os.Lstat(path)
		switch {
		case os.IsNotExist(err) && create && i < len(comps)-1:
			if err := os.Mkdir(path, 0o755); err != nil && !os.IsExist(err) {
				return "", err
			}
		case os.IsNotExist(err):
		case err != nil:
			return "", err
		case st.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(path)
			return "", &LinkError{Path: path, Target: target}
		}
	}
	return path, nil
}

// Remove deletes the file rel below root; no component may be a link
// (checked with Lstat first, which leaves a race window).
func Remove(root, rel string) error {
	path, err := check(root, rel, false)
	if err != nil {
		return err
	}
	st, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s: %w", path, ErrNotRegular)
	}
	return os.Remove(path)
}
