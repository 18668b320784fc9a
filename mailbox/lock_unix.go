//go:build unix

package mailbox

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/palacehq/palace/repofs"
)

// lockFile takes an exclusive advisory lock on path (created if missing), to
// serialise distribute and registry updates. A link in its place is refused:
// a dangling link must not create a file where it points.
func lockFile(path string) (unlock func(), err error) {
	f, err := repofs.OpenFile(filepath.Dir(path), filepath.Base(path), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock mailbox: %w", err)
	}
	unlockF, err := flock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock mailbox %s: %w", path, err)
	}
	return func() {
		unlockF()
		f.Close()
	}, nil
}

// flock takes an exclusive advisory lock on an open file; appends hold it
// around the last-byte check and the write, so only one repairs a last line.
func flock(f *os.File) (unlock func(), err error) {
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }, nil
}
