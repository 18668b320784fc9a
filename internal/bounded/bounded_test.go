package bounded_test

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/palacehq/palace/internal/bounded"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	os.WriteFile(small, []byte("hello"), 0o644)
	exact := filepath.Join(dir, "exact")
	os.WriteFile(exact, bytes.Repeat([]byte("x"), 10), 0o644)
	over := filepath.Join(dir, "over")
	os.WriteFile(over, bytes.Repeat([]byte("x"), 11), 0o644)
	link := filepath.Join(dir, "link")
	os.Symlink(small, link)

	for _, tt := range []struct {
		name, path string
		want       string
		err        error
	}{
		{"small", small, "hello", nil},
		{"exactly the limit", exact, strings.Repeat("x", 10), nil},
		{"one over", over, "", bounded.ErrTooLarge},
		{"symlink to a regular file", link, "hello", nil},
		{"directory", dir, "", bounded.ErrNotRegular},
		{"device", os.DevNull, "", bounded.ErrNotRegular},
		{"missing", filepath.Join(dir, "nope"), "", fs.ErrNotExist},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := bounded.ReadFile(tt.path, 10)
			if !errors.Is(err, tt.err) || (tt.err == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if string(b) != tt.want {
				t.Errorf("read %q, want %q", b, tt.want)
			}
		})
	}
}

func TestReadFileRefusesFIFOWithoutBlocking(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no FIFOs")
	}
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip(err)
	}
	_, err := bounded.ReadFile(p, 10)
	var ke *bounded.KindError
	if !errors.As(err, &ke) || ke.Kind != "a named pipe (FIFO)" {
		t.Fatalf("err = %v, want a FIFO refusal", err)
	}
}

func TestReader(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want string
		err  error
	}{
		{"", "", nil},
		{"12345", "12345", nil},
		{"123456", "", bounded.ErrTooLarge},
	} {
		got, err := bounded.ReadAll(strings.NewReader(tt.in), 5)
		if !errors.Is(err, tt.err) || (tt.err == nil && err != nil) {
			t.Errorf("%q: err = %v, want %v", tt.in, err, tt.err)
		}
		if tt.err == nil && string(got) != tt.want {
			t.Errorf("%q: read %q", tt.in, got)
		}
	}
	// A reader that never ends is cut one byte past the limit.
	counted := &countingReader{}
	if _, err := bounded.ReadAll(counted, 1<<10); !errors.Is(err, bounded.ErrTooLarge) {
		t.Fatalf("endless reader: err = %v", err)
	}
	if counted.n > 1<<10+1 {
		t.Errorf("read %d bytes from an endless reader with a 1 KiB limit", counted.n)
	}
}

type countingReader struct{ n int }

func (c *countingReader) Read(p []byte) (int, error) {
	c.n += len(p)
	return len(p), nil
}

var _ io.Reader = (*countingReader)(nil)

func TestHuman(t *testing.T) {
	for n, want := range map[int64]string{100: "100 bytes", 2 << 10: "2 KiB", 1 << 20: "1 MiB", 3 << 30: "3 GiB", 1500: "1500 bytes"} {
		if got := bounded.Human(n); got != want {
			t.Errorf("Human(%d) = %q, want %q", n, got, want)
		}
	}
}
