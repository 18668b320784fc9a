package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palacehq/palace/host"
)

// sparse makes path a file of size bytes that takes no room on disk.
func sparse(t *testing.T, path string, size int64) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

// Every command that reads a box or the spool refuses one over
// host.MaxBoxBytes before reading it, naming the file, its size and the
// fix; nothing is written.
func TestBoxSizeLimit(t *testing.T) {
	over := int64(host.MaxBoxBytes) + 1
	size := fmt.Sprintf("%d bytes, over the limit of 256 MiB", over)
	e := newEnv(t)
	if err := os.MkdirAll(e.home, 0o700); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(e.dir, "big.jsonl")
	sparse(t, big, over)
	for _, args := range [][]string{
		{"mailbox", "check", "big.jsonl"},
		{"mailbox", "list", "--box", "big.jsonl"},
	} {
		r := e.run(args...)
		if r.code != 2 || !strings.Contains(r.stderr, "big.jsonl is "+size) || !strings.Contains(r.stderr, "move older letters to another file") {
			t.Errorf("palace %v: exit %d, want 2 naming the file, its size and the fix:\n%s", args, r.code, r.stderr)
		}
	}

	// The spool: distribute stops, sweep lists it as unreachable and goes on.
	spool := filepath.Join(e.home, "field-reports.jsonl")
	sparse(t, spool, over)
	r := e.run("mailbox", "distribute")
	if r.code != 2 || !strings.Contains(r.stderr, spool+" is "+size) {
		t.Errorf("distribute with a spool over the limit: exit %d, want 2 naming it:\n%s", r.code, r.stderr)
	}
	r = e.run("mailbox", "sweep")
	if r.code != 0 || !strings.Contains(r.stdout, "unreachable "+spool) || !strings.Contains(r.stdout, fmt.Sprintf("%d bytes", over)) {
		t.Errorf("sweep with a spool over the limit: exit %d, want 0 and the spool unreachable with its size:\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	// A box to deliver to: the run stops before writing anything.
	if err := os.Remove(spool); err != nil {
		t.Fatal(err)
	}
	e.ok("mailbox", "file", "--class", "note", "--what", "for the global box")
	global := filepath.Join(e.home, "inbox.jsonl")
	sparse(t, global, over)
	r = e.run("mailbox", "distribute")
	if r.code != 2 || !strings.Contains(r.stderr, global+" is "+size) {
		t.Errorf("distribute to a box over the limit: exit %d, want 2 naming it:\n%s", r.code, r.stderr)
	}
	if st, err := os.Stat(global); err != nil || st.Size() != over {
		t.Errorf("the box over the limit was written: %v, %v", st.Size(), err)
	}
}
