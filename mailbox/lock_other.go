//go:build !unix

package mailbox

import "os"

// lockFile and flock are no-ops without flock(2): concurrent runs may then
// append a letter twice (PM005) or a blank line (PM014), never lose one.
func lockFile(string) (func(), error) { return func() {}, nil }
func flock(*os.File) (func(), error)  { return func() {}, nil }
