package lsp

import (
	"reflect"
	"testing"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/palacehq/palace/internal/finding"
	"github.com/palacehq/palace/policies"
)

// findingDiagnostics places every kind of finding the same way: byte
// columns become UTF-16, EndCol bounds the range or the line's end does,
// an empty range widens to one character, and only a warning is a warning.
func TestFindingDiagnostics(t *testing.T) {
	d := newDocument(uri.File("/r/x"), "", 1, "héllo wörld\nsecond\n\n")
	diag := func(l0, c0, l1, c1 uint32, sev protocol.DiagnosticSeverity, code, msg string) protocol.Diagnostic {
		return protocol.Diagnostic{
			Range:    protocol.Range{Start: protocol.Position{Line: l0, Character: c0}, End: protocol.Position{Line: l1, Character: c1}},
			Severity: sev, Code: protocol.String(code), Source: protocol.NewOptional("palace"), Message: protocol.String(msg),
		}
	}
	type letter struct {
		finding.Finding
		LetterID string
	}
	got := findingDiagnostics(d, []letter{
		{Finding: finding.Finding{Line: 1, Col: 4, Code: "PM001", Severity: finding.Error, Message: "to the end"}},
		{Finding: finding.Finding{Line: 2, Col: 1, EndCol: 3, Code: "PM002", Severity: finding.Warning, Message: "bounded"}},
		{Finding: finding.Finding{Line: 3, Col: 1, Code: "PM003", Severity: finding.Error, Message: "empty line"}},
	}, " (s)")
	want := []protocol.Diagnostic{
		diag(0, 2, 0, 11, protocol.DiagnosticSeverityError, "PM001", "to the end (s)"),
		diag(1, 0, 1, 2, protocol.DiagnosticSeverityWarning, "PM002", "bounded (s)"),
		diag(2, 0, 2, 1, protocol.DiagnosticSeverityError, "PM003", "empty line (s)"),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("letters:\n got %+v\nwant %+v", got, want)
	}

	// A policy error has no column, or no line at all: it marks the first
	// line from its start.
	got = findingDiagnostics(d, policies.Errors{{Finding: finding.Finding{Code: "load_error", Message: "bad"}}}, "")
	want = []protocol.Diagnostic{diag(0, 0, 0, 11, protocol.DiagnosticSeverityError, "load_error", "bad")}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("policy:\n got %+v\nwant %+v", got, want)
	}
}
