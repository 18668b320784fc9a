//go:build !unix

package mailbox

import "os"

// lockFile is a no-op where flock(2) does not exist: two concurrent
// `palace mailbox distribute` runs could then both append a letter, which
// the next check reports as a duplicate (PM005).
func lockFile(string) (func(), error) { return func() {}, nil }

// flock is a no-op there too: two writers repairing the same unterminated
// last line at once leave a blank line (PM014), nothing is lost.
func flock(*os.File) (func(), error) { return func() {}, nil }
