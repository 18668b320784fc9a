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
	// n is the 1-based line number.
	n int
	// b is the line without '\n', '\r' and (on line 1) BOM; nil when tooLong.
	b []byte
	// complete is false for a last line with no '\n': in the spool that is a
	// letter still being written (readers do not take the inode lock that
	// O_APPEND writers hold), so it is left for the next run.
	complete bool
	// tooLong marks a line over MaxLineBytes; its bytes were skipped
	// without being held in memory.
	tooLong bool
}

// eachLine streams the lines of r. Memory stays bounded by MaxLineBytes
// whatever the input (a 10 MB line is skipped, not buffered). fn's b is
// only valid during the call.
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

// readFileLines is eachLine over a file (openBox's checks first); a
// missing file has no lines.
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

// openBox opens a box or the spool for reading. It must be a regular file
// (checked before opening, so a FIFO never blocks the open) of at most
// MaxBoxBytes: a reader keeps what it reads (letters, ids), so a larger
// file is refused with an *fs.PathError around a *bounded.SizeError
// instead of being read. A missing file is an error matching
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

// checkOpenBox applies openBox's rules to a file already open (it may have
// been replaced, or have grown, since a Stat of its path).
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
