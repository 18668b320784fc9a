// Package finding owns the one located problem palace reports about a file
// — a policy, a card file, a line of a mailbox — its severity and the
// `path:line:col: CODE message` line editors, hooks and the CLI read. Each
// checker embeds Finding in its own type for the fields only it has, and
// the language server turns any of them into a diagnostic in one place. It
// must not import anything of palace's.
package finding

import (
	"fmt"
	"slices"
)

// Severity of a finding: an error makes the file unusable (not imported, a
// hook fails); warnings alone do not.
type Severity string

// The two severities.
const (
	Error   Severity = "error"
	Warning Severity = "warning"
)

// Finding is one problem at a place in a file. Line and Col are 1-based,
// Col in bytes of the line as stored; EndCol is exclusive, 0 for "to the
// end of the line". The JSON names are part of palace's output formats.
type Finding struct {
	Path     string   `json:"path"`
	Line     int      `json:"line"`
	Col      int      `json:"col"`
	EndCol   int      `json:"end_col,omitempty"`
	Code     string   `json:"code"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
}

// String renders the finding as `path:line:col: CODE message`; a warning's
// message starts with "warning: ".
func (f Finding) String() string {
	msg := f.Message
	if f.Severity == Warning {
		msg = "warning: " + msg
	}
	return fmt.Sprintf("%s:%d:%d: %s %s", f.Path, f.Line, f.Col, f.Code, msg)
}

// Located returns the finding itself. A type embedding Finding gets it,
// which lets Placed code take any checker's findings.
func (f Finding) Located() Finding { return f }

// Placed is any checker's finding: Finding or a type embedding it.
type Placed interface{ Located() Finding }

// HasErrors reports whether any finding is an error.
func HasErrors[F Placed](fs []F) bool {
	return slices.ContainsFunc(fs, func(f F) bool { return f.Located().Severity == Error })
}
