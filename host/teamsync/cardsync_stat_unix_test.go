//go:build unix

package teamsync

import (
	"bytes"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palacehq/palace/host/repofs"
	"golang.org/x/sys/unix"
)

// TestDirStaterRead: a card file is read whole with the stat of its open
// handle, into the buffer given when it has room; a file past the limit is
// cut one byte over it; links, directories, FIFOs and sockets are refused
// as not regular, without blocking on the FIFO.
func TestDirStaterRead(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	small := []byte("---\nid: kc_a\n---\n")
	write("small.md", small)
	big := bytes.Repeat([]byte("x"), 300_000)
	write("big.md", big)
	write("over.md", bytes.Repeat([]byte("y"), 5000))
	write("empty.md", nil)
	notRegular(t, dir, "", "small.md")
	// A socket path must be short; listen in a directory of its own.
	sockDir, err := os.MkdirTemp("", "ps")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sockDir)
	l, err := net.Listen("unix", filepath.Join(sockDir, "s.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()

	ds, err := openDirStater(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	roomy := make([]byte, 0, 1<<20)
	for _, c := range []struct {
		name     string
		buf      []byte
		lim      int64
		want     []byte
		wantSize int64
	}{
		{"small.md", nil, 1 << 20, small, int64(len(small))},
		{"small.md", roomy, 1 << 20, small, int64(len(small))},
		{"big.md", make([]byte, 0, 10), 1 << 20, big, int64(len(big))}, // too small a buffer: a new one
		{"big.md", roomy, 1 << 20, big, int64(len(big))},
		{"over.md", nil, 1001, bytes.Repeat([]byte("y"), 1001), 5000},
		{"empty.md", nil, 1 << 20, []byte{}, 0},
	} {
		got, st, err := ds.read(c.buf, c.name, c.lim)
		if err != nil {
			t.Fatalf("read %s: %v", c.name, err)
		}
		if !bytes.Equal(got, c.want) || st.size != c.wantSize || st.mtime == 0 {
			t.Errorf("read %s (buffer cap %d, limit %d) = %d bytes, stat %+v; want %d bytes, size %d", c.name, cap(c.buf), c.lim, len(got), st, len(c.want), c.wantSize)
		}
		// A buffer with room is read into, not replaced.
		if cap(c.buf) > len(c.want) && len(got) > 0 && &got[0] != &c.buf[:1][0] {
			t.Errorf("read %s did not use the buffer it was given", c.name)
		}
	}
	for _, name := range []string{"link.md", "dir.md", "fifo.md"} {
		if _, _, err := ds.read(nil, name, 1<<20); !errors.Is(err, repofs.ErrNotRegular) {
			t.Errorf("read %s: %v, want a not-regular error", name, err)
		}
	}
	sds, err := openDirStater(sockDir)
	if err != nil {
		t.Fatal(err)
	}
	defer sds.Close()
	if _, _, err := sds.read(nil, "s.md", 1<<20); !errors.Is(err, repofs.ErrNotRegular) {
		t.Errorf("read a socket: %v, want a not-regular error", err)
	}
	if _, _, err := ds.read(nil, "gone.md", 1<<20); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("read a missing file: %v, want not-exist", err)
	}
}

// TestScanCardDirSkipsWhatIsNotACardFile: a scan leaves the new regular
// card files to the decoding, which reads each just before decoding it
// (its sha, size and mtime set then), and passes over links,
// directories, FIFOs and hidden or non-.md names. A new file removed, or
// replaced by a FIFO, before the decoding reads it is a PC017 finding
// naming it, without a hang.
func TestScanCardDirSkipsWhatIsNotACardFile(t *testing.T) {
	dir := t.TempDir()
	body := "---\nid: kc_a\n---\n"
	for name, text := range map[string]string{"kc_a.md": body, "kc_b.md": body, "kc_c.md": body, "notes.txt": "x", ".kc_hidden.md": body} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	notRegular(t, dir, "kc_", "kc_a.md")
	files, ds, err := (&Team{}).scanCardDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	var names []string
	for _, f := range files {
		names = append(names, f.id)
		if !f.lazy || f.data != nil || f.sha != "" {
			t.Errorf("%s scanned as %+v, want it left to the decoding", f.id, f)
		}
	}
	if strings.Join(names, ",") != "kc_a,kc_b,kc_c" {
		t.Fatalf("scanned %v, want kc_a, kc_b, kc_c", names)
	}
	// After the scan: kc_b is removed, kc_c becomes a FIFO.
	if err := os.Remove(filepath.Join(dir, "kc_b.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "kc_c.md")); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(dir, "kc_c.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	fs := decodeFiles(files, ds, 2).findings()
	a := files[0]
	if a.sha != sha256Hex([]byte(body)) || a.size != int64(len(body)) || a.mtime == 0 {
		t.Errorf("kc_a decoded with sha %s, size %d, mtime %d", a.sha, a.size, a.mtime)
	}
	read := map[string]string{}
	for _, f := range fs {
		if f.Code == "PC017" {
			read[f.Path] = f.Message
		}
	}
	if len(read) != 2 || !strings.Contains(read[".palace/cards/kc_b.md"], "removed") || !strings.Contains(read[".palace/cards/kc_c.md"], "not a regular file") {
		t.Errorf("read findings %v, want kc_b removed and kc_c not regular", read)
	}
}

// notRegular puts a link to target, a directory and a FIFO named
// <prefix>link.md, <prefix>dir.md and <prefix>fifo.md in dir.
func notRegular(t *testing.T, dir, prefix, target string) {
	t.Helper()
	if err := os.Symlink(filepath.Join(dir, target), filepath.Join(dir, prefix+"link.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, prefix+"dir.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(dir, prefix+"fifo.md"), 0o644); err != nil {
		t.Fatal(err)
	}
}
