package mailbox

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/palacehq/palace/internal/bounded"
)

// boxLine is one line read from a spool or box file.
type boxLine struct {
	n        int    // 1-based
	b        []byte // without '\n', '\r' and (line 1) BOM; nil when tooLong
	complete bool   // false for a last line with no '\n'
	tooLong  bool   // over MaxLineBytes: skipped, never held
}

// eachLine streams the lines of r in memory bounded by MaxLineBytes; fn's b
// is only valid during the call.
func eachLine(r io.Reader, fn func(boxLine) error) error {
	br := bufio.NewReaderSize(r, MaxLineBytes+2)
	for n := 1; ; n++ {
		b, err := br.ReadSlice('\n')
		tooLong := false
		for errors.Is(err, bufio.ErrBufferFull) {
			tooLong = true
			_, err = br.ReadSlice('\n')
		}
		if len(b) == 0 && err == io.EOF && !tooLong {
			return nil
		}
		if err != nil && err != io.EOF {
			return err
		}
		complete := err == nil
		line := bytes.TrimSuffix(b, nl)
		if n == 1 {
			line = bytes.TrimPrefix(line, bom)
		}
		line = bytes.TrimSuffix(line, []byte{'\r'})
		bl := boxLine{n: n, b: line, complete: complete, tooLong: tooLong}
		if tooLong {
			bl.b = nil
		}
		if ferr := fn(bl); ferr != nil {
			return ferr
		}
		if !complete {
			return nil
		}
	}
}

// readFileLines is eachLine over a file opened by openBox; a missing file has no lines.
func readFileLines(path string, fn func(boxLine) error) error {
	f, err := openBox(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if err := eachLine(f, fn); err != nil {
		return fmt.Errorf("read box %s: %w", path, err)
	}
	return nil
}

// openBox opens a box or the spool for reading: a regular file (checked
// before opening, so a FIFO never blocks) of at most MaxBoxBytes, else an
// *fs.PathError around a *bounded.SizeError. A missing file matches
// fs.ErrNotExist.
func openBox(path string) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read box %s: %w", path, err)
	}
	if err := boxSizeOK(path, st); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read box %s: %w", path, err)
	}
	if err := checkOpenBox(f, path); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// checkOpenBox applies openBox's rules to an open file, which may have
// changed since its path was checked.
func checkOpenBox(f *os.File, path string) error {
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("read box %s: %w", path, err)
	}
	return boxSizeOK(path, st)
}

func boxSizeOK(path string, st fs.FileInfo) error {
	if !st.Mode().IsRegular() {
		return fmt.Errorf("read box %s: %w", path, bounded.ErrNotRegular)
	}
	if st.Size() > MaxBoxBytes {
		return &fs.PathError{Op: "read box", Path: path, Err: fmt.Errorf("%w; it is not read: a box holds short letters, so check that it is one, or move older letters to another file",
			&bounded.SizeError{Size: st.Size(), Limit: MaxBoxBytes})}
	}
	return nil
}
