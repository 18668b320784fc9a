package mailbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
	"unsafe"
)

// issue is a problem found in one line, before it becomes a Finding.
type issue struct {
	code  string
	sev   Severity
	field string
	col   int // 1-based byte column in the line; 0 = unknown
	msg   string
}

// The letter's fields, in schema order.
const (
	fTS = iota
	fAgent
	fClass
	fWhat
	fRepo
	fTool
	fExpected
	fSnippet
	fKind
	fAnswers
	fExternal
	nFields
)

var fieldNames = [nFields]string{"ts", "agent", "class", "what", "repo", "tool", "expected", "snippet", "kind", "answers", "external"}

// fieldCols holds each present field's 1-based column (0 = absent).
type fieldCols [nFields]int

func fieldIndex(name string) int {
	for i, n := range fieldNames {
		if n == name {
			return i
		}
	}
	return -1
}

// parseLetter decodes one line (no line ending, no BOM) and returns every
// problem: errors make the line not a letter, warnings do not. Members are
// walked by hand because encoding/json matches keys case-insensitively,
// keeps the last duplicate and reports no positions.
func parseLetter(line []byte) (Letter, fieldCols, []issue) {
	return parseLetterWith(line, decodeString)
}

// parseLetterView is parseLetter whose unescaped strings share line's
// bytes: the letter is valid only while line is.
func parseLetterView(line []byte) (Letter, fieldCols, []issue) {
	return parseLetterWith(line, decodeStringView)
}

func parseLetterWith(line []byte, decode func([]byte) (string, bool)) (Letter, fieldCols, []issue) {
	var (
		l    Letter
		cols fieldCols
	)
	if len(line) > MaxLineBytes {
		return l, cols, []issue{{code: CodeLongLine, sev: SeverityError, col: MaxLineBytes + 1,
			msg: fmt.Sprintf("line is %d bytes, over the %d-byte limit; a letter is a report, not an attachment", len(line), MaxLineBytes)}}
	}
	if !utf8.Valid(line) {
		col := 1
		for i := 0; i < len(line); {
			r, n := utf8.DecodeRune(line[i:])
			if r == utf8.RuneError && n <= 1 {
				col = i + 1
				break
			}
			i += n
		}
		return l, cols, []issue{{code: CodeUTF8, sev: SeverityError, col: col,
			msg: fmt.Sprintf("invalid UTF-8 at byte %d; letters are UTF-8 JSON", col)}}
	}
	if !validJSON(line) {
		return l, cols, []issue{syntaxIssue(line)}
	}
	start := skipWS(line, 0)
	if line[start] != '{' {
		return l, cols, []issue{{code: CodeInvalidJSON, sev: SeverityError, col: start + 1,
			msg: fmt.Sprintf("not a JSON object (got %s); a letter is one JSON object per line", jsonKind(line[start:]))}}
	}

	var (
		issues []issue
		bad    [nFields]bool
	)
	typeErr := func(f int, col int, want string, v []byte) {
		bad[f] = true
		issues = append(issues, issue{code: CodeField, sev: SeverityError, field: fieldNames[f], col: col,
			msg: fmt.Sprintf("%q must be %s, got %s", fieldNames[f], want, jsonKind(v))})
	}
	forEachMember(line, start, func(key []byte, keyOff int, val []byte, _ int) {
		name, ok := decode(key)
		col := keyOff + 1
		f := fieldIndex(name)
		if !ok || f < 0 {
			issues = append(issues, issue{code: CodeUnknownField, sev: SeverityWarning, col: col,
				msg: fmt.Sprintf("unknown field %s (ignored)", quoteShort(name))})
			return
		}
		if cols[f] != 0 {
			bad[f] = true
			issues = append(issues, issue{code: CodeField, sev: SeverityError, field: name, col: col,
				msg: fmt.Sprintf("duplicate field %q", name)})
			return
		}
		cols[f] = col
		switch f {
		case fAnswers:
			if val[0] == 'n' {
				return
			}
			if val[0] != '[' {
				typeErr(f, col, "an array of letter ids", val)
				return
			}
			i := -1
			forEachElement(val, func(e []byte) {
				i++
				s, ok := decode(e)
				if !ok {
					bad[f] = true
					issues = append(issues, issue{code: CodeField, sev: SeverityError, field: name, col: col,
						msg: fmt.Sprintf("%q must be a string, got %s", fmt.Sprintf("answers[%d]", i), jsonKind(e))})
					return
				}
				l.Answers = append(l.Answers, s)
			})
		case fExternal:
			if err := l.External.UnmarshalJSON(val); err != nil {
				bad[f] = true
				issues = append(issues, issue{code: CodeField, sev: SeverityError, field: name, col: col, msg: err.Error()})
			}
		default:
			if val[0] == 'n' && f >= fRepo {
				return // null optional string = absent
			}
			s, ok := decode(val)
			if !ok {
				typeErr(f, col, "a string", val)
				return
			}
			*stringField(&l, f) = s
		}
	})
	issues = append(issues, validate(l, &cols, &bad)...)
	return l, cols, issues
}

func stringField(l *Letter, f int) *string {
	return [...]*string{fTS: &l.TS, fAgent: &l.Agent, fClass: &l.Class, fWhat: &l.What, fRepo: &l.Repo,
		fTool: &l.Tool, fExpected: &l.Expected, fSnippet: &l.Snippet, fKind: &l.Kind}[f]
}

func syntaxIssue(line []byte) issue {
	var v any
	err := json.Unmarshal(line, &v)
	col, msg := 1, "invalid JSON"
	var se *json.SyntaxError
	if errors.As(err, &se) {
		col, msg = int(se.Offset), "invalid JSON: "+se.Error()
		if col < 1 {
			col = 1
		}
		if len(bytes.TrimSpace(line)) == 0 || int(se.Offset) >= len(line) {
			col = len(line) + 1
		}
	}
	return issue{code: CodeInvalidJSON, sev: SeverityError, col: col, msg: msg}
}

// decodeString decodes a JSON string token; ok is false for other tokens.
func decodeString(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner), true
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

// decodeStringView is decodeString returning an unescaped string as a view
// of v's bytes, valid only while v is unchanged.
func decodeStringView(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	inner := v[1 : len(v)-1]
	if len(inner) == 0 {
		return "", true
	}
	if bytes.IndexByte(inner, '\\') < 0 {
		return unsafe.String(&inner[0], len(inner)), true
	}
	return decodeString(v)
}

// forEachMember calls fn with each raw key and value, and their offsets, of
// the valid JSON object at b[start]; on any surprise it stops.
func forEachMember(b []byte, start int, fn func(key []byte, keyOff int, val []byte, valOff int)) {
	i := start + 1
	for {
		i = skipWS(b, i)
		if i >= len(b) || b[i] != '"' {
			return
		}
		kEnd := skipString(b, i)
		if kEnd < 0 {
			return
		}
		keyOff := i
		i = skipWS(b, kEnd)
		if i >= len(b) || b[i] != ':' {
			return
		}
		i = skipWS(b, i+1)
		vEnd := skipValue(b, i)
		if vEnd <= i {
			return
		}
		fn(b[keyOff:kEnd], keyOff, b[i:vEnd], i)
		i = skipWS(b, vEnd)
		if i >= len(b) || b[i] != ',' {
			return
		}
		i++
	}
}

// forEachElement calls fn with each raw element (without whitespace) of
// the array at b[0] ('['), which must be valid JSON.
func forEachElement(b []byte, fn func(elem []byte)) {
	i := skipWS(b, 1)
	if i >= len(b) || b[i] == ']' {
		return
	}
	for {
		end := skipValue(b, i)
		if end <= i {
			return
		}
		fn(b[i:end])
		i = skipWS(b, end)
		if i >= len(b) || b[i] != ',' {
			return
		}
		i = skipWS(b, i+1)
	}
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// skipString returns the offset after the string starting at b[i] ('"'),
// or -1 if it does not end.
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// skipValue returns the offset after the value starting at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = skipString(b, j)
				if j < 0 {
					return -1
				}
				j--
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return j
		}
		j++
	}
	return j
}
