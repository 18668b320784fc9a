package host

import (
	"github.com/palacehq/palace/mailbox"
)

// Input limits shared by every surface, checked once in host: far above
// honest use, small enough that a crafted value cannot bloat the database,
// the indexes or a context pack.
const (
	// MaxJSONLBytes bounds one --jsonl import: every row is validated in
	// memory before the first is written.
	MaxJSONLBytes = 256 << 20
	// MaxHintsFileBytes bounds a file given to `palace hints`: source code,
	// not data.
	MaxHintsFileBytes = 16 << 20
	// MaxInputBytes bounds a JSON input document (policy eval --input).
	MaxInputBytes = 16 << 20
	// MaxBoxBytes bounds one mailbox box or spool file palace reads
	// (check, list, sweep, distribute, the language server).
	MaxBoxBytes = mailbox.MaxBoxBytes
	// MaxModuleBytes bounds a policy file or .wasm module read from disk (a
	// Go-built plugin is ~3 MB; anything far larger is not a policy).
	MaxModuleBytes = 64 << 20
)

// checkLimit is the one rule for every --limit: 0 means no limit, a
// negative count is refused.
func checkLimit(n int) error {
	if n < 0 {
		return invalid("limit", "--limit %d is negative: pass 0 for no limit", n)
	}
	return nil
}
