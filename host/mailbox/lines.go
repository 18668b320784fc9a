package mailbox

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
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

// readFileLines is eachLine over a file; a missing file has no lines.
func readFileLines(path string, fn func(boxLine) error) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read box %s: %w", path, err)
	}
	defer f.Close()
	if err := eachLine(f, fn); err != nil {
		return fmt.Errorf("read box %s: %w", path, err)
	}
	return nil
}
