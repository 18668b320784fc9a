package plugins

import "time"

// Interruptible reports whether m's guest is stopped by palace's own
// checks (interrupt.go) rather than by wazero's WithCloseOnContextDone.
func Interruptible(m *Module) bool { return m.interruptible }

// RewrittenFile is the name of the rewritten module in a cache entry.
const RewrittenFile = rewrittenFile

// RewriteID is the suffix of a cache entry's directory.
const RewriteID = rewriteID

// Validate is Load's walk over a module's sections, with the default
// memory cap.
func Validate(wasm []byte) error { return validate(wasm, uint32(DefaultMemoryLimit/pageSize)) }

// SetCompileBudget replaces how long Load may spend compiling a module,
// and returns a function restoring it.
func SetCompileBudget(d time.Duration) (restore func()) {
	old := compileBudget
	compileBudget = d
	return func() { compileBudget = old }
}

func validate(b []byte, memoryPages uint32) error {
	_, err := validateModule(b, memoryPages)
	return err
}
