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
// file; with the size and mtime of what it read. The buffer is sized by
// the open file's fstat, so a file costs open, fstat, one read and close;
// the bytes are read into buf when it has room for them.
func (d *dirStater) read(buf []byte, name string, limit int64) (data []byte, st fileStat, err error) {
	fd, err := retryEINTR(func() (int, error) {
		return unix.Openat(int(d.f.Fd()), name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	})
	switch {
	case err == unix.ENOENT:
		return nil, st, os.ErrNotExist
	case err == unix.ELOOP, err == unix.ENXIO: // a link, a socket
		return nil, st, fmt.Errorf("%s: %w: a card file must be a regular file", name, repofs.ErrNotRegular)
	case err != nil:
		return nil, st, &os.PathError{Op: "open", Path: name, Err: err}
	}
	defer unix.Close(fd)
	var fst unix.Stat_t
	if err := unix.Fstat(fd, &fst); err != nil {
		return nil, st, &os.PathError{Op: "fstat", Path: name, Err: err}
	}
	if fst.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, st, fmt.Errorf("%s: %w: a card file must be a regular file", name, repofs.ErrNotRegular)
	}
	st = fileStat{size: fst.Size, mtime: fst.Mtim.Nano()}
	if need := min(fst.Size, limit) + 1; int64(cap(buf)) >= need {
		buf = buf[:need]
	} else {
		buf = make([]byte, need)
	}
	n := 0
	for int64(n) < limit {
		if n == len(buf) {
			buf = append(buf, make([]byte, len(buf))...)
		}
		want := buf[n:min(int64(len(buf)), limit)]
		m, err := retryEINTR(func() (int, error) { return unix.Read(fd, want) })
		if err != nil {
			return nil, st, &os.PathError{Op: "read", Path: name, Err: err}
		}
		n += m
		// A read short of what was asked, once the file's whole size is
		// in, is its end: no second read to meet it.
		if m == 0 || (m < len(want) && int64(n) >= fst.Size) {
			break
		}
	}
	return buf[:n], st, nil
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
