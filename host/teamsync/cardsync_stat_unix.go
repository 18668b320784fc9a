//go:build unix

package teamsync

import (
	"fmt"
	"os"

	"github.com/palacehq/palace/host/repofs"
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

// read returns the bytes of name, at most limit (a caller asking for one
// byte over its limit learns the file is larger), opened relative to the
// directory handle without following a link (non-blocking, so a FIFO put
// in its place cannot hang the sync), and refused unless it is a regular
// file. size is its size when it was stat'ed: the buffer is sized for it,
// so an unchanged file costs open, fstat, two reads and close.
func (d *dirStater) read(name string, size, limit int64) ([]byte, error) {
	fd, err := retryEINTR(func() (int, error) {
		return unix.Openat(int(d.f.Fd()), name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	})
	switch {
	case err == unix.ENOENT:
		return nil, os.ErrNotExist
	case err == unix.ELOOP:
		return nil, fmt.Errorf("%s: %w: a card file must be a regular file", name, repofs.ErrNotRegular)
	case err != nil:
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &os.PathError{Op: "fstat", Path: name, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, fmt.Errorf("%s: %w: a card file must be a regular file", name, repofs.ErrNotRegular)
	}
	buf := make([]byte, min(max(size, st.Size), limit)+1)
	n := 0
	for int64(n) < limit {
		if n == len(buf) {
			buf = append(buf, make([]byte, len(buf))...)
		}
		m, err := retryEINTR(func() (int, error) { return unix.Read(fd, buf[n:min(int64(len(buf)), limit)]) })
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: name, Err: err}
		}
		if m == 0 {
			break
		}
		n += m
	}
	return buf[:n], nil
}

func retryEINTR(fn func() (int, error)) (int, error) {
	for {
		n, err := fn()
		if err != unix.EINTR {
			return n, err
		}
	}
}

func (d *dirStater) Close() error { return d.f.Close() }
