//go:build unix

package staleness

import (
	"io/fs"
	"syscall"
)

// inode is part of a file's identity: an editor's atomic save replaces
// the file with another inode even when size and time agree.
func inode(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
