package mailbox

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// MaxLineBytes is the longest letter line palace writes or accepts. A letter
// is a report, not an attachment; the cap also bounds the work per line.
const MaxLineBytes = 64 << 10

// Letter is one field report. Fields marshal in this order.
type Letter struct {
	// TS (RFC3339), Agent, Class (tool_error, missing_doc, …) and What are
	// required.
	TS    string `json:"ts"`
	Agent string `json:"agent"`
	Class string `json:"class"`
	What  string `json:"what"`
	// Repo is a path (~, worktrees and a trailing "(annotation)" are fine)
	// or a remote such as github.com/org/name; empty means the global box.
	Repo     string `json:"repo,omitempty"`
	Tool     string `json:"tool,omitempty"`
	Expected string `json:"expected,omitempty"`
	Snippet  string `json:"snippet,omitempty"`
	// Kind "triage" or "receipt" closes the letters listed in Answers.
	Kind    string   `json:"kind,omitempty"`
	Answers []string `json:"answers,omitempty"` // ids of the letters it replies to
	// External marks a letter whose fate is tracked outside palace.
	External External `json:"external,omitzero"`
}

// The kinds whose letters close what they answer.
const (
	KindTriage  = "triage"
	KindReceipt = "receipt"
)

// Closing reports whether l closes the letters it answers.
func (l Letter) Closing() bool { return l.Kind == KindTriage || l.Kind == KindReceipt }

// Time parses TS; the zero time if it does not parse.
func (l Letter) Time() time.Time {
	t, _ := time.Parse(time.RFC3339, l.TS)
	return t
}

// External is the letter's "external" field: true or where it is tracked
// (an issue URL, a ticket id). false, "" and null are the omitted zero value.
type External struct {
	Set bool
	Ref string
}

// IsZero reports whether the letter is not external.
func (e External) IsZero() bool { return !e.Set }

// MarshalJSON writes the reference if there is one, else true.
func (e External) MarshalJSON() ([]byte, error) {
	if e.Ref != "" {
		return json.Marshal(e.Ref)
	}
	return json.Marshal(e.Set)
}

// UnmarshalJSON accepts true, false, null or a string.
func (e *External) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch v := v.(type) {
	case nil:
		*e = External{}
	case bool:
		*e = External{Set: v}
	case string:
		*e = External{Set: v != "", Ref: v}
	default:
		return fmt.Errorf(`"external" must be true, false or a string, got %s`, jsonKind(b))
	}
	return nil
}

// LetterError says why a line is not a valid letter.
type LetterError struct {
	Code  string // PM001, PM002, PM009 or PM010
	Field string // empty when the whole line is at fault
	Col   int    // 1-based byte column, 0 when unknown
	Msg   string
}

func (e *LetterError) Error() string { return "letter: " + e.Msg }

// ParseLine decodes and validates one line of a box or the spool, ignoring
// a trailing "\n" or "\r\n". The error is a *LetterError naming the first
// problem. Unknown fields are accepted, so a newer palace's letters stay valid.
func ParseLine(raw []byte) (Letter, error) {
	l, _, issues := parseLetter(trimEOL(raw))
	for _, is := range issues {
		if is.sev == SeverityError {
			return Letter{}, &LetterError{Code: is.code, Field: is.field, Col: is.col, Msg: is.msg}
		}
	}
	return l, nil
}

// ParseDraft is ParseLine for a letter given to `palace mailbox file`: the
// JSON may span lines and ts may be missing (File stamps it).
func ParseDraft(raw []byte) (Letter, error) {
	l, cols, issues := parseLetter(bytes.TrimSpace(raw))
	for _, is := range issues {
		if is.field == "ts" && cols[fTS] == 0 {
			continue
		}
		if is.sev == SeverityError {
			return Letter{}, &LetterError{Code: is.code, Field: is.field, Col: is.col, Msg: is.msg}
		}
	}
	return l, nil
}

// Validate checks the fields of a letter built in code (as `mailbox file`
// does from flags) with the same rules and messages as ParseLine.
func (l Letter) Validate() error {
	for _, is := range validate(l, nil, nil) {
		if is.sev == SeverityError {
			return &LetterError{Code: is.code, Field: is.field, Msg: is.msg}
		}
	}
	return nil
}

// ID is the letter id of a line: the first 12 hex characters of the sha256
// of its bytes without a trailing "\n" and then "\r" (so CRLF checkouts keep
// their ids). A byte-order mark counts; readers strip it from a file's start.
func ID(raw []byte) string {
	sum := sha256.Sum256(trimEOL(raw))
	return hex.EncodeToString(sum[:6])
}

// IsID reports whether s has the form of a letter id: 12 lowercase hex.
func IsID(s string) bool {
	return len(s) == 12 && strings.Trim(s, "0123456789abcdef") == ""
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte{'\n'})
	return bytes.TrimSuffix(b, []byte{'\r'})
}

// marshalLine renders l as one "\n"-terminated line, without escaping <, > and &.
func marshalLine(l Letter) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(l); err != nil {
		return nil, fmt.Errorf("encode letter: %w", err)
	}
	return b.Bytes(), nil
}

// validate checks field values. cols gives each present field's column
// (nil for a letter built in code); fields in skip already have an error.
func validate(l Letter, cols *fieldCols, skip *[nFields]bool) []issue {
	var out []issue
	bad := func(field, format string, args ...any) {
		if skip != nil && skip[fieldIndex(field)] {
			return
		}
		col := 0
		if cols != nil {
			col = cols[fieldIndex(field)]
		}
		out = append(out, issue{code: CodeField, sev: SeverityError, field: field, col: col, msg: fmt.Sprintf(format, args...)})
	}
	for _, f := range [...]struct {
		idx     int
		name, v string
	}{{fTS, "ts", l.TS}, {fAgent, "agent", l.Agent}, {fClass, "class", l.Class}, {fWhat, "what", l.What}} {
		switch blank := strings.TrimSpace(f.v) == ""; {
		case cols != nil && cols[f.idx] == 0, cols == nil && blank:
			bad(f.name, "missing required field %q", f.name)
		case blank:
			bad(f.name, "%q is empty", f.name)
		}
	}
	if strings.TrimSpace(l.TS) != "" {
		if _, err := time.Parse(time.RFC3339, l.TS); err != nil {
			bad("ts", "%q is not RFC3339: %s (want e.g. 2025-06-01T12:00:00Z)", "ts", quoteShort(l.TS))
		}
	}
	for i, a := range l.Answers {
		if !IsID(a) {
			bad("answers", "%q is not a letter id (12 lowercase hex characters): %s", fmt.Sprintf("answers[%d]", i), quoteShort(a))
		}
	}
	return out
}

// quoteShort quotes a user value cut to 24 runes: too short to echo a pasted secret.
func quoteShort(s string) string {
	r := []rune(s)
	if len(r) > 24 {
		return fmt.Sprintf("%q…", string(r[:24]))
	}
	return fmt.Sprintf("%q", s)
}

func jsonKind(v []byte) string {
	v = bytes.TrimLeft(v, " \t\r\n")
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}
