package host

import "github.com/palacehq/palace/internal/hosterr"

// Kind classifies a host error; the CLI maps each kind to one exit code
// and MCP/LSP to their error forms.
type Kind = hosterr.Kind

// Error kinds.
const (
	// KindInternal is a storage or engine failure (exit 4).
	KindInternal = hosterr.KindInternal
	// KindInvalid is bad input: a wrong field, unknown id, conflict (exit 2).
	KindInvalid = hosterr.KindInvalid
	// KindDenied is a "no": a gate or a floor refused the change (exit 1).
	KindDenied = hosterr.KindDenied
	// KindMode is an operation refused in the current mode (exit 3).
	KindMode = hosterr.KindMode
)

// Error is a host error with a kind and, for bad input, the field at fault.
// The context-pack pipeline returns the same type, so errors.As with a
// *host.Error matches its errors too.
type Error = hosterr.Error

// KindOf returns the kind of err: KindInternal for errors host did not classify.
func KindOf(err error) Kind { return hosterr.KindOf(err) }

// ExitCode maps err to a CLI exit code: 0 for nil.
func ExitCode(err error) int { return hosterr.ExitCode(err) }

func invalid(field, format string, args ...any) error {
	return hosterr.Invalid(field, format, args...)
}

func internal(err error, format string, args ...any) error {
	return hosterr.Internal(err, format, args...)
}
