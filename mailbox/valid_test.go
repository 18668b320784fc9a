package mailbox

import (
	"encoding/json"
	"strings"
	"testing"
)

var validCases = []string{
	`{}`, ` {} `, `[]`, `{"a":1}`, `{"a":[1,2,{"b":null}],"c":"d"}`, `"x"`, `0`, `-0`, `-0.5e+10`, `1E5`, `true`, `false`, `null`,
	`{"a":"\u00e9\n\t\"\\\/"}`, "{\"a\":\"\xff\"}", `[[[[[]]]]]`, `{"a":{}}`, `[{}, [], ""]`, "\t\r\n{}\n",
	// invalid
	``, ` `, `{`, `}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `[,1]`, `{,}`, `01`, `-`, `1.`, `.5`, `1e`, `1e+`, `+1`, `tru`, `nul`, `nulll`,
	`"\x"`, `"\u12"`, `"\u12g4"`, "\"a\x01\"", `"abc`, `{"a":1}{}`, `[1 2]`, `{"a" 1}`, `{1:2}`, `[}`, `{]`, `"\`, `[`, `{"a":[}`,
	`{"a":"b",}`, `{"a":"b" "c":1}`, "\x00", `NaN`, `Infinity`, `{"a":-}`, `[-01]`, `[1.5e3, -2E-2]`,
}

// TestValidJSONAgreesWithEncodingJSON: validJSON answers as json.Valid on
// hand-picked valid and invalid texts.
func TestValidJSONAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range validCases {
		if got, want := validJSON([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("validJSON(%q) = %v, json.Valid says %v", c, got, want)
		}
	}
	deep := strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000)
	if !validJSON([]byte(deep)) || validJSON([]byte(deep[:len(deep)-1])) {
		t.Error("deep nesting misjudged")
	}
}

// FuzzValidJSON checks validJSON against json.Valid on any bytes.
func FuzzValidJSON(f *testing.F) {
	for _, c := range validCases {
		f.Add([]byte(c))
	}
	f.Add([]byte(`{"ts":"2025-06-01T12:00:00Z","agent":"agent-1","class":"tool_error","what":"x","answers":["a1b2c3d4e5f6"],"external":{"k":[1,true]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid says %v", b, got, want)
		}
	})
}
