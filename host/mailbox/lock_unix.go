//go:build unix

package mailbox

import (
	"fmt"
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock on path (created if missing),
// serialising distribute and registry updates across processes. File does
// not take it: its single O_APPEND write needs no lock.
func lockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock mailbox: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock mailbox %s: %w", path, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
