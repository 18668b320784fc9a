package host

import (
	"io"

	"github.com/palacehq/palace/internal/bounded"
	"github.com/palacehq/palace/internal/limits"
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

// OpenInputFile opens a file named by flag for streaming, with the checks of
// ReadInputFile; reading past limit fails with a KindInvalid error.
func OpenInputFile(flag, path string, limit int64) (io.ReadCloser, error) {
	f, _, err := bounded.Open(path, limit)
	if err != nil {
		return nil, limits.InputFileError(flag, path, limit, err)
	}
	return f, nil
}

// LimitInput wraps a stream named by flag (stdin) so that reading more than
// limit bytes fails with a KindInvalid error naming it.
func LimitInput(flag string, r io.Reader, limit int64) io.Reader {
	return limits.LimitInput(flag, r, limit)
}
