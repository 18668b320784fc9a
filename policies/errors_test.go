package policies_test

import (
	"encoding/json"
	"testing"

	"github.com/palacehq/palace/internal/finding"
	"github.com/palacehq/palace/policies"
)

// A policy error keeps the text and the JSON `palace policy check` has
// always printed, whatever the located finding it embeds carries.
func TestErrorText(t *testing.T) {
	located := policies.Error{Finding: finding.Finding{Path: "p/gate.rego", Line: 3, Code: "rego_parse_error", Severity: finding.Error, Message: "bad"}}
	for _, tc := range []struct {
		e    policies.Error
		text string
		json string
	}{
		{located, "p/gate.rego:3:1: rego_parse_error: bad",
			`{"code":"rego_parse_error","file":"p/gate.rego","line":3,"col":0,"message":"bad"}`},
		{policies.Error{Finding: finding.Finding{Path: "p/x.wasm", Code: "plugin_error", Message: "m"}}, "p/x.wasm: plugin_error: m",
			`{"code":"plugin_error","file":"p/x.wasm","line":0,"col":0,"message":"m"}`},
		{policies.Error{Finding: finding.Finding{Code: "load_error", Message: "m"}}, "load_error: m",
			`{"code":"load_error","file":"","line":0,"col":0,"message":"m"}`},
	} {
		if got := tc.e.Error(); got != tc.text {
			t.Errorf("Error() = %q, want %q", got, tc.text)
		}
		b, err := json.Marshal(policies.Errors{tc.e})
		if err != nil {
			t.Fatal(err)
		}
		if got := string(b); got != "["+tc.json+"]" {
			t.Errorf("json = %s, want [%s]", got, tc.json)
		}
	}
}
