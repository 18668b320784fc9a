//go:build unix

package main

import (
	"io"
	"os"
	"syscall"

	"golang.org/x/term"
)

// pollableStdin returns stdin as a file the Go runtime polls, so closing it
// ends a read in progress: after exit the server's reader stops at once
// instead of waiting for the editor to close the pipe. A terminal, or a
// reader that is not os.Stdin, is returned as it is.
func pollableStdin(r io.Reader) io.Reader {
	f, ok := r.(*os.File)
	if !ok || f != os.Stdin || term.IsTerminal(int(f.Fd())) {
		return r
	}
	if err := syscall.SetNonblock(int(f.Fd()), true); err != nil {
		return r
	}
	return os.NewFile(f.Fd(), "/dev/stdin")
}
