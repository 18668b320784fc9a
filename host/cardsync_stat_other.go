//go:build !unix

package host

import (
	"os"
	"path/filepath"
)

// dirStater stats the entries of one directory (by path where the system
// has no stat relative to a directory handle).
type dirStater struct{ dir string }

func openDirStater(dir string) (*dirStater, error) { return &dirStater{dir: dir}, nil }

// stat returns name's size and mtime, and whether it is a regular file;
// os.ErrNotExist when it is gone.
func (d *dirStater) stat(name string) (size, mtime int64, regular bool, err error) {
	fi, err := os.Lstat(filepath.Join(d.dir, name))
	if err != nil {
		return 0, 0, false, err
	}
	return fi.Size(), fi.ModTime().UnixNano(), fi.Mode().IsRegular(), nil
}

func (d *dirStater) Close() error { return nil }
