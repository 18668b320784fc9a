// Package hosterr owns the classified error of host's API: a Kind that the
// CLI maps to an exit code and MCP/LSP to their error forms, and the Error
// that carries it. It sits below host and the packages host splits its work
// into (the context-pack pipeline), so all of them return the same error;
// host re-exports it (host.Error, host.Kind, host.KindOf) and callers never
// import this package. It must not import anything of palace's.
package hosterr

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Kind classifies a host error; the CLI maps each kind to one exit code
// and MCP/LSP to their error forms.
type Kind int

// Error kinds.
const (
	// KindInternal is a storage or engine failure (exit 4).
	KindInternal Kind = iota
	// KindInvalid is bad input: a wrong field, unknown id, conflict (exit 2).
	KindInvalid
	// KindDenied is a "no": a gate or a floor refused the change (exit 1).
	KindDenied
	// KindMode is an operation refused in the current mode (exit 3).
	KindMode
)

// ExitCode is the CLI exit code of a kind.
func (k Kind) ExitCode() int {
	switch k {
	case KindInvalid:
		return 2
	case KindDenied:
		return 1
	case KindMode:
		return 3
	}
	return 4
}

// Error is a host error with a kind and, for bad input, the field at fault.
type Error struct {
	Kind Kind
	// Field names the input field at fault, when there is one.
	Field string
	Msg   string
	// Reasons carries a denial's reasons (gate output or floors).
	Reasons []string
	Err     error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Msg + ": " + e.Err.Error()
	}
	return e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the kind of err: KindInternal for errors nobody classified.
func KindOf(err error) Kind {
	var he *Error
	if errors.As(err, &he) {
		return he.Kind
	}
	return KindInternal
}

// ExitCode maps err to a CLI exit code: 0 for nil.
func ExitCode(err error) int {
	if err == nil {
		return 0
	}
	return KindOf(err).ExitCode()
}

// Invalid is a KindInvalid error naming the input field at fault.
func Invalid(field, format string, args ...any) error {
	return &Error{Kind: KindInvalid, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Denied is a KindDenied error with the reasons of the refusal.
func Denied(msg string, reasons []string) error {
	return &Error{Kind: KindDenied, Msg: msg, Reasons: reasons}
}

// Internal is a KindInternal error wrapping err with what was being done.
func Internal(err error, format string, args ...any) error {
	return &Error{Kind: KindInternal, Msg: fmt.Sprintf(format, args...), Err: err}
}

// OneOf checks a value against its enumeration, as a bad-input error
// naming the field and the values to choose from.
func OneOf[T ~string](field string, v T, allowed []T) error {
	if slices.Contains(allowed, v) {
		return nil
	}
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = string(a)
	}
	return Invalid(field, "%s %q is not valid: use one of %s", field, v, strings.Join(names, ", "))
}

// Classify passes classified errors through and wraps anything else as
// KindInternal with what was being done.
func Classify(err error, op string) error {
	var he *Error
	if errors.As(err, &he) {
		return he
	}
	return Internal(err, "%s", op)
}
