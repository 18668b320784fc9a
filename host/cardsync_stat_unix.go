//go:build unix

package host

import (
	"os"

	"golang.org/x/sys/unix"
)

// dirStater stats the entries of one directory relative to an open handle
// of it, so each stat resolves one name instead of walking the whole path
// again (a sync that changes nothing is mostly these stats).
type dirStater struct{ f *os.File }

func openDirStater(dir string) (*dirStater, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	return &dirStater{f: f}, nil
}

// stat returns name's size and mtime, and whether it is a regular file;
// os.ErrNotExist when it is gone.
func (d *dirStater) stat(name string) (size, mtime int64, regular bool, err error) {
	var st unix.Stat_t
	if err := unix.Fstatat(int(d.f.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if err == unix.ENOENT {
			return 0, 0, false, os.ErrNotExist
		}
		return 0, 0, false, &os.PathError{Op: "fstatat", Path: name, Err: err}
	}
	return st.Size, st.Mtim.Nano(), st.Mode&unix.S_IFMT == unix.S_IFREG, nil
}

func (d *dirStater) Close() error { return d.f.Close() }
