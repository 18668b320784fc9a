//go:build !unix

package teamsync

import (
	"bytes"
	"io"
	"os"
	"path/filepath"

	"github.com/palacehq/palace/host/repofs"
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

// read returns the bytes of name, at most limit, without following a
// link, with the size and mtime of what it read (into buf when it has
// room).
func (d *dirStater) read(buf []byte, name string, limit int64) ([]byte, fileStat, error) {
	fh, err := repofs.OpenFile(d.dir, name, os.O_RDONLY, 0)
	if err != nil {
		return nil, fileStat{}, err
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return nil, fileStat{}, err
	}
	b := bytes.NewBuffer(buf[:0])
	if _, err := b.ReadFrom(io.LimitReader(fh, limit)); err != nil {
		return nil, fileStat{}, err
	}
	return b.Bytes(), fileStat{size: fi.Size(), mtime: fi.ModTime().UnixNano()}, nil
}

func (d *dirStater) Close() error { return nil }
