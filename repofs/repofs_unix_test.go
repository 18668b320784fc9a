//go:build unix

package repofs_test

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/palacehq/palace/repofs"
)

func TestOpenFileRefusesNonRegular(t *testing.T) {
	tr := newTree(t)
	if err := os.MkdirAll(filepath.Join(tr.root, ".palace"), 0o755); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(tr.root, ".palace", "inbox.jsonl")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := repofs.OpenFile(tr.root, ".palace/inbox.jsonl", os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, repofs.ErrNotRegular) {
			t.Errorf("FIFO: %v, want ErrNotRegular", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("opening a FIFO hung")
	}
	// A directory in the file's place is refused too.
	if err := os.Mkdir(filepath.Join(tr.root, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := repofs.OpenFile(tr.root, "dir", os.O_RDONLY, 0); !errors.Is(err, repofs.ErrNotRegular) {
		t.Errorf("directory: %v, want ErrNotRegular", err)
	}
}
