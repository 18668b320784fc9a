// Package finding owns what the file checkers of palace (card files, the
// mailbox) share about a problem they found: its severity and the one
// `path:line:col: CODE message` line editors, hooks and the CLI read. Each
// checker keeps its own Finding type with the fields it needs and formats
// it here, so the line reads the same everywhere. It must not import
// anything of palace's.
package finding

import "fmt"

// Severity of a finding: an error makes the file unusable (not imported, a
// hook fails); warnings alone do not.
type Severity string

// The two severities.
const (
	Error   Severity = "error"
	Warning Severity = "warning"
)

// Format renders a finding as `path:line:col: CODE message`; a warning's
// message starts with "warning: ".
func Format(path string, line, col int, code string, sev Severity, msg string) string {
	if sev == Warning {
		msg = "warning: " + msg
	}
	return fmt.Sprintf("%s:%d:%d: %s %s", path, line, col, code, msg)
}

// Located is a finding as an editor places it: every checker's finding
// converts to it (a Located method), and the language server turns it
// into a diagnostic in one place, so a mailbox line, a card file and a
// policy file are marked the same way.
type Located struct {
	// Line and Col are 1-based (Col in bytes of the line); EndCol is
	// exclusive, 0 for "to the end of the line".
	Line, Col, EndCol int
	Code              string
	Severity          Severity
	Message           string
}
