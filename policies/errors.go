package policies

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/palacehq/palace/internal/finding"
)

// Error is one located policy problem, always of severity error. It
// renders as `file:line:col: code: message`, the form editors and CI logs
// understand, and its JSON names the path "file".
type Error struct{ finding.Finding }

func newError(code, file string, line, col int, msg string) Error {
	return Error{finding.Finding{Path: file, Line: line, Col: col, Code: code, Severity: finding.Error, Message: msg}}
}

func (e Error) Error() string {
	loc := e.Path
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d:%d", e.Path, e.Line, max(e.Col, 1))
	}
	if loc == "" {
		return fmt.Sprintf("%s: %s", e.Code, e.Message)
	}
	return fmt.Sprintf("%s: %s: %s", loc, e.Code, e.Message)
}

// MarshalJSON writes the fields `palace policy check --format json` has
// always written: code, file, line, col, message.
func (e Error) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Code    string `json:"code"`
		File    string `json:"file"`
		Line    int    `json:"line"`
		Col     int    `json:"col"`
		Message string `json:"message"`
	}{e.Code, e.Path, e.Line, e.Col, e.Message})
}

// Errors is a list of located problems from one load.
type Errors []Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// located converts OPA's ast.Errors (or any error) into Errors. file
// overrides an empty location file.
func located(err error, file string) Errors {
	var aerrs ast.Errors
	if errors.As(err, &aerrs) {
		out := make(Errors, 0, len(aerrs))
		for _, ae := range aerrs {
			e := newError(ae.Code, file, 0, 0, ae.Message)
			if ae.Location != nil {
				if ae.Location.File != "" {
					e.Path = ae.Location.File
				}
				e.Line, e.Col = ae.Location.Row, ae.Location.Col
			}
			out = append(out, e)
		}
		return out
	}
	var aerr *ast.Error
	if errors.As(err, &aerr) {
		return located(ast.Errors{aerr}, file)
	}
	var es Errors
	if errors.As(err, &es) {
		return es
	}
	return Errors{newError("load_error", file, 0, 0, err.Error())}
}
