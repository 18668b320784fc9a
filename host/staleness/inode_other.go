//go:build !unix

package staleness

import "io/fs"

// inode is 0 where the platform has none: size and time identify a file.
func inode(fs.FileInfo) uint64 { return 0 }
