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

// read returns the bytes of name, at most limit, without following a link.
func (d *dirStater) read(name string, _, limit int64) ([]byte, error) {
	fh, err := repofs.OpenFile(d.dir, name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(fh, limit)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (d *dirStater) Close() error { return nil }
