// Package bounded reads files and streams with a size limit fixed before the
// first byte: a path must name a regular file, its size is checked before
// reading, and reading never allocates more than limit+1 bytes, so /dev/zero,
// a FIFO or a huge file is refused at once. ReadFileWithin also keeps a
// repository's links from leading out of it.
//
// It knows nothing of palace's fields or exit codes: callers wrap its errors
// (match them with errors.Is against ErrNotRegular and ErrTooLarge).
package bounded

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

var (
	// ErrNotRegular is returned for a directory, device, FIFO or socket.
	ErrNotRegular = errors.New("not a regular file")
	// ErrTooLarge is returned when a file or stream holds more than the limit.
	ErrTooLarge = errors.New("over the size limit")
)

// SizeError reports a file or stream over its limit. It matches ErrTooLarge.
type SizeError struct {
	// Size is the file's size from Stat, or -1 for a stream (only "more
	// than Limit" is known).
	Size  int64
	Limit int64
}

func (e *SizeError) Error() string {
	if e.Size < 0 {
		return fmt.Sprintf("more than %s: %s", Human(e.Limit), ErrTooLarge)
	}
	return fmt.Sprintf("%d bytes, %s of %s", e.Size, ErrTooLarge, Human(e.Limit))
}

// Is makes errors.Is(err, ErrTooLarge) hold.
func (e *SizeError) Is(target error) bool { return target == ErrTooLarge }

// KindError reports a path that is not a regular file. It matches ErrNotRegular.
type KindError struct {
	// Kind is "a directory", "a named pipe (FIFO)", "a device", "a socket"
	// or "not a regular file".
	Kind string
}

func (e *KindError) Error() string { return "is " + e.Kind }

// Is makes errors.Is(err, ErrNotRegular) hold.
func (e *KindError) Is(target error) bool { return target == ErrNotRegular }

// ReadFile reads the regular file at path, refusing one larger than limit
// bytes. A symlink is followed (its target must be a regular file). Errors
// from the file system are returned as they are (*fs.PathError).
func ReadFile(path string, limit int64) ([]byte, error) {
	f, size, err := Open(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readSized(f, size, limit)
}

// ErrOutside is matched (errors.Is) by an *OutsideError.
var ErrOutside = errors.New("symbolic link leads outside")

// OutsideError refuses a path below a root that resolves, through a
// symbolic link, to a file outside the root.
type OutsideError struct {
	// Path is the path as given; Resolved is where its links lead (empty
	// when the path changed while it was read); Root is the root as given.
	Path, Resolved, Root string
}

func (e *OutsideError) Error() string {
	if e.Resolved == "" {
		return fmt.Sprintf("%s changed while it was read (a symbolic link was swapped in): read it again, and check what replaces files under %s", e.Path, e.Root)
	}
	return fmt.Sprintf("%s resolves to %s, outside %s: palace follows a symbolic link there only to a file inside %s; replace the link with a copy of the file, or remove it",
		e.Path, e.Resolved, e.Root, e.Root)
}

// Is makes errors.Is(err, ErrOutside) hold.
func (e *OutsideError) Is(target error) bool { return target == ErrOutside }

// ReadFileWithin is ReadFile for a path below root whose symbolic links may
// lead only to a file inside root: one that leads out, or a link swapped in
// after the open, is an *OutsideError and nothing is read.
func ReadFileWithin(root, path string, limit int64) ([]byte, error) {
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	absPath, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	realRoot, err := filepath.EvalSymlinks(absRoot)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(absPath)
	if err != nil {
		return nil, err
	}
	if !within(realRoot, real) {
		return nil, &OutsideError{Path: path, Resolved: real, Root: root}
	}
	rc, size, err := Open(real, limit)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	opened, err := rc.(*limitedFile).f.Stat()
	if err != nil {
		return nil, err
	}
	again, err := filepath.EvalSymlinks(absPath)
	if err != nil || again != real {
		return nil, &OutsideError{Path: path, Root: root}
	}
	if st, err := os.Stat(again); err != nil || !os.SameFile(opened, st) {
		return nil, &OutsideError{Path: path, Root: root}
	}
	return readSized(rc, size, limit)
}

// within reports whether p is root or below it (both clean and absolute).
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// readSized reads all of f, of size bytes at Stat, holding at most limit+1.
func readSized(f io.Reader, size, limit int64) ([]byte, error) {
	// size+1 lets a file that grew since Stat be seen.
	buf := make([]byte, 0, size+1)
	for {
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), min(2*int64(cap(buf)), limit+1))
			copy(grown, buf)
			buf = grown
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// Open opens the regular file at path for reading and returns it with its
// size. The path is checked with Stat before it is opened, so a FIFO is
// refused without blocking on open, and the open file once more. The
// returned reader yields at most limit bytes and then fails (ErrTooLarge).
func Open(path string, limit int64) (io.ReadCloser, int64, error) {
	before, err := os.Stat(path)
	if err != nil {
		return nil, 0, err
	}
	if err := regular(before); err != nil {
		return nil, 0, err
	}
	if before.Size() > limit {
		return nil, 0, &SizeError{Size: before.Size(), Limit: limit}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	after, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	// Checked again: the path may have been replaced since Stat.
	if err := regular(after); err != nil {
		f.Close()
		return nil, 0, err
	}
	if after.Size() > limit {
		f.Close()
		return nil, 0, &SizeError{Size: after.Size(), Limit: limit}
	}
	return &limitedFile{Reader: Reader(f, limit), f: f}, after.Size(), nil
}

type limitedFile struct {
	io.Reader
	f *os.File
}

func (l *limitedFile) Close() error { return l.f.Close() }

func regular(fi fs.FileInfo) error {
	m := fi.Mode()
	switch {
	case m.IsRegular():
		return nil
	case m.IsDir():
		return &KindError{Kind: "a directory"}
	case m&fs.ModeNamedPipe != 0:
		return &KindError{Kind: "a named pipe (FIFO)"}
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		return &KindError{Kind: "a device"}
	case m&fs.ModeSocket != 0:
		return &KindError{Kind: "a socket"}
	}
	return &KindError{Kind: "not a regular file"}
}

// Reader returns a reader of r that fails with a *SizeError (matching
// ErrTooLarge) once more than limit bytes have come through it, for streams
// such as stdin whose size cannot be known in advance. It never reads more
// than limit+1 bytes from r.
func Reader(r io.Reader, limit int64) io.Reader {
	return &limitReader{r: r, left: limit + 1, limit: limit}
}

type limitReader struct {
	r     io.Reader
	left  int64 // bytes that may still be read from r, one past the limit
	limit int64
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.left <= 0 {
		return 0, &SizeError{Size: -1, Limit: l.limit}
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left <= 0 {
		// The byte past the limit arrived: report it instead of the data.
		return n - 1, &SizeError{Size: -1, Limit: l.limit}
	}
	return n, err
}

// ReadAll reads all of r, failing with a *SizeError once it holds more than
// limit bytes.
func ReadAll(r io.Reader, limit int64) ([]byte, error) {
	return io.ReadAll(Reader(r, limit))
}

// Human writes a byte count the way palace's messages and README do: 1 MiB,
// 64 KiB, 100 bytes.
func Human(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
