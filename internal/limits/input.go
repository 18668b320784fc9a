package limits

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/palacehq/palace/internal/bounded"
	"github.com/palacehq/palace/internal/hosterr"
)

// ReadInputFile reads a file named by flag (e.g. "--file", "FILE") of at
// most limit bytes. A path that is not a regular file, cannot be read or is
// over the limit is bad input (KindInvalid) naming the flag; nothing larger
// than limit+1 bytes is ever allocated.
func ReadInputFile(flag, path string, limit int64) ([]byte, error) {
	b, err := bounded.ReadFile(path, limit)
	if err != nil {
		return nil, InputFileError(flag, path, limit, err)
	}
	return b, nil
}

// OpenInputFile opens a file named by flag for streaming, with the checks of
// ReadInputFile; reading past limit fails with a KindInvalid error.
func OpenInputFile(flag, path string, limit int64) (io.ReadCloser, error) {
	f, _, err := bounded.Open(path, limit)
	if err != nil {
		return nil, InputFileError(flag, path, limit, err)
	}
	return f, nil
}

// ReadInputFileWithin is ReadInputFile for a file of a repository (root):
// a symbolic link on its path may lead only to a file inside root
// (bounded.ReadFileWithin); one that leads out is bad input naming the
// file, where it leads and the fix, and nothing is read.
func ReadInputFileWithin(flag, root, path string, limit int64) ([]byte, error) {
	b, err := bounded.ReadFileWithin(root, path, limit)
	if err != nil {
		return nil, InputFileError(flag, path, limit, err)
	}
	return b, nil
}

// InputFileError classifies a failure to read the file named by flag as
// bad input naming the flag and what to do.
func InputFileError(flag, path string, limit int64, err error) error {
	field := strings.TrimLeft(flag, "-")
	var ke *bounded.KindError
	var pe *fs.PathError
	switch {
	case errors.As(err, &ke):
		return hosterr.Invalid(field, "%s %s %s: pass a regular file (pipe a stream to - instead)", flag, path, ke.Error())
	case errors.Is(err, bounded.ErrOutside):
		return &hosterr.Error{Kind: hosterr.KindInvalid, Field: field, Msg: fmt.Sprintf("%s %s", flag, path), Err: err}
	case errors.Is(err, bounded.ErrTooLarge):
		return hosterr.Invalid(field, "%s %s is %v: pass a smaller file", flag, path, err)
	case errors.As(err, &pe):
		err = pe.Err
	}
	return &hosterr.Error{Kind: hosterr.KindInvalid, Field: field, Msg: fmt.Sprintf("%s %s cannot be read", flag, path), Err: err}
}

// LimitInput wraps a stream named by flag (stdin) so that reading more than
// limit bytes fails with a KindInvalid error naming it.
func LimitInput(flag string, r io.Reader, limit int64) io.Reader {
	return &inputReader{r: bounded.Reader(r, limit), flag: flag, limit: limit}
}

type inputReader struct {
	r     io.Reader
	flag  string
	limit int64
}

func (r *inputReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if errors.Is(err, bounded.ErrTooLarge) {
		err = hosterr.Invalid(strings.TrimLeft(r.flag, "-"), "%s is over the limit of %s: split the input", r.flag, bounded.Human(r.limit))
	}
	return n, err
}
