//go:build !unix

package mailbox

// lockFile is a no-op where flock(2) does not exist: two concurrent
// `palace mailbox distribute` runs could then both append a letter, which
// the next check reports as a duplicate (PM005).
func lockFile(string) (func(), error) { return func() {}, nil }
