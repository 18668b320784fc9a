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

// TestReadFileWithin follows links that stay inside the root and refuses
// those that lead out, whether the file or a folder on its way is the link.
func TestReadFileWithin(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "repo")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(root, "docs"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, "AGENTS.md"), "inside")
	write(filepath.Join(outside, "secret"), "outside")
	link := func(target, at string) {
		if err := os.Symlink(target, filepath.Join(root, at)); err != nil {
			t.Fatal(err)
		}
	}
	link("AGENTS.md", "CLAUDE.md")
	link(filepath.Join(outside, "secret"), "leak.md")
	link("../outside", "out")
	link("docs", "docs-link")
	link("../outside/none", "dangling")
	// The root itself may be reached through a link: it is the caller's.
	viaRoot := filepath.Join(base, "via")
	if err := os.Symlink(root, viaRoot); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(root, "docs", "x.md"), "doc")
	// Relative paths are read from the working directory, as a command
	// line gives them.
	t.Chdir(root)
	for _, c := range []struct {
		name, root, path, want string
		err                    error
	}{
		{"plain file", root, filepath.Join(root, "AGENTS.md"), "inside", nil},
		{"link inside", root, filepath.Join(root, "CLAUDE.md"), "inside", nil},
		{"folder link inside", root, filepath.Join(root, "docs-link", "x.md"), "doc", nil},
		{"root through a link", viaRoot, filepath.Join(viaRoot, "CLAUDE.md"), "inside", nil},
		{"file links out", root, filepath.Join(root, "leak.md"), "", bounded.ErrOutside},
		{"folder links out", root, filepath.Join(root, "out", "secret"), "", bounded.ErrOutside},
		{"dangling link", root, filepath.Join(root, "dangling"), "", fs.ErrNotExist},
		{"too large", root, filepath.Join(root, "AGENTS.md"), "", bounded.ErrTooLarge},
		{"relative path", root, "CLAUDE.md", "inside", nil},
		{"relative root and path", ".", filepath.Join("docs", "x.md"), "doc", nil},
		{"relative path links out", root, "leak.md", "", bounded.ErrOutside},
	} {
		t.Run(c.name, func(t *testing.T) {
			limit := int64(100)
			if c.err == bounded.ErrTooLarge {
				limit = 3
			}
			b, err := bounded.ReadFileWithin(c.root, c.path, limit)
			if !errors.Is(err, c.err) || string(b) != c.want {
				t.Fatalf("got %q, %v; want %q, %v", b, err, c.want, c.err)
			}
			var oe *bounded.OutsideError
			if errors.As(err, &oe) && (oe.Path != c.path || !strings.Contains(err.Error(), "resolves to "+filepath.Join(outside, "secret"))) {
				t.Errorf("message %q does not name the path and where it leads", err)
			}
		})
	}
}
