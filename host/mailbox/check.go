package mailbox

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"sort"
	"sync"

	"github.com/palacehq/palace/host/secrets"
)

// Severity of a finding. Any error fails the hook (exit 1); warnings alone
// do not (exit 0).
type Severity string

// The two severities.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Finding codes. They are stable: tools, docs and team policies key on them.
const (
	CodeInvalidJSON     = "PM001"
	CodeField           = "PM002"
	CodeSecret          = "PM003"
	CodeConflict        = "PM004"
	CodeDuplicate       = "PM005"
	CodeHistory         = "PM006"
	CodeUnknownAnswer   = "PM007"
	CodeProjectInGlobal = "PM008"
	CodeUTF8            = "PM009"
	CodeLongLine        = "PM010"
	CodeBOM             = "PM011"
	CodeCRLF            = "PM012"
	CodeUnknownField    = "PM013"
	CodeBlankLine       = "PM014"
	CodeNoFinalNewline  = "PM015"
	// CodePolicyDeny is a palace.mailbox deny message. A message may carry
	// its own code in PM102–PM199 by starting with it ("PM120: …").
	CodePolicyDeny = "PM100"
	// CodePolicyError: the policy failed, so the letter is refused (fail
	// closed).
	CodePolicyError = "PM101"
)

// CodeInfo documents one finding code.
type CodeInfo struct {
	Code     string   `json:"code"`
	Severity Severity `json:"severity"`
	Summary  string   `json:"summary"`
}

var codeTable = []CodeInfo{
	{CodeInvalidJSON, SeverityError, "line is not one JSON object"},
	{CodeField, SeverityError, "required field missing, field of the wrong type or value (ts not RFC3339, answers not ids), duplicate field"},
	{CodeSecret, SeverityError, "a secret (shown redacted); exempt a deliberate fixture with palace:allow-secret"},
	{CodeConflict, SeverityError, "merge conflict marker line"},
	{CodeDuplicate, SeverityError, "the same letter (same id) appears twice"},
	{CodeHistory, SeverityError, "a committed line was changed, moved or deleted; boxes are append-only"},
	{CodeUnknownAnswer, SeverityWarning, "answers names a letter that is not in this box"},
	{CodeProjectInGlobal, SeverityError, "a letter naming a project sits in the global box"},
	{CodeUTF8, SeverityError, "invalid UTF-8"},
	{CodeLongLine, SeverityError, fmt.Sprintf("line longer than %d bytes", MaxLineBytes)},
	{CodeBOM, SeverityWarning, "byte-order mark at the start of the file (ignored)"},
	{CodeCRLF, SeverityWarning, "CRLF line endings (the \\r is ignored; ids are unchanged)"},
	{CodeUnknownField, SeverityWarning, "unknown field (ignored)"},
	{CodeBlankLine, SeverityWarning, "blank line (ignored)"},
	{CodeNoFinalNewline, SeverityWarning, "no newline at end of file (palace adds one before appending)"},
	{CodePolicyDeny, SeverityError, "denied by the team's palace.mailbox policy (PM102–PM199: the policy's own codes)"},
	{CodePolicyError, SeverityError, "the palace.mailbox policy failed; the letter is refused (fail closed)"},
}

// Codes returns the finding codes in order, for docs and `--explain`.
func Codes() []CodeInfo { return append([]CodeInfo(nil), codeTable...) }

// Finding is one problem in a box. Line and Col are 1-based; Col counts
// bytes of the line as stored (a BOM on line 1 counts), as the secret
// scanner does; the LSP converts to UTF-16.
type Finding struct {
	Path     string   `json:"path"`
	Line     int      `json:"line"`
	Col      int      `json:"col"`
	EndCol   int      `json:"end_col,omitempty"` // exclusive; 0 = unknown
	Code     string   `json:"code"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
	// LetterID is the id of the line's letter, when it has one.
	LetterID string `json:"letter_id,omitempty"`
	// Rule is the secret rule (PM003) or policy message origin, if any.
	Rule string `json:"rule,omitempty"`
}

// String renders the finding as `path:line:col: CODE message`; a warning's
// message starts with "warning: ".
func (f Finding) String() string {
	msg := f.Message
	if f.Severity == SeverityWarning {
		msg = "warning: " + msg
	}
	return fmt.Sprintf("%s:%d:%d: %s %s", f.Path, f.Line, f.Col, f.Code, msg)
}

// HasErrors reports whether any finding is an error.
func HasErrors(fs []Finding) bool {
	for _, f := range fs {
		if f.Severity == SeverityError {
			return true
		}
	}
	return false
}

// CheckOptions configures Check. The zero value checks a repo box on its own.
type CheckOptions struct {
	// Base is the committed version of the box (HEAD). When non-nil, every
	// committed line must still be there, unchanged and in place (PM006).
	// nil — a new file, or no history check — and empty are the same.
	Base []byte
	// Global says the file is the global box: letters naming a project are
	// errors there (PM008), and DenyInput.Box is "global" instead of "repo".
	Global bool
	// KnownIDs, when set, also accepts answers to letters outside the file
	// (from a sweep) before PM007 warns.
	KnownIDs func(id string) bool
	// Deny runs the team's palace.mailbox rules on every valid letter.
	Deny DenyRules
}

var (
	bom = []byte{0xEF, 0xBB, 0xBF}
	nl  = []byte{'\n'}
)

type lineKind uint8

const (
	kindBlank lineKind = iota
	kindMarker
	kindBroken // not a letter (PM001/2/9/10)
	kindLetter
)

// lineResult is what the parallel phase learns about one line.
type lineResult struct {
	kind     lineKind
	id       string
	letter   Letter
	cols     fieldCols
	crlf     bool
	findings []Finding
}

// minChunk keeps small boxes on one goroutine: below ~256 KiB the
// goroutines cost more than they save.
const minChunk = 256 << 10

// Check runs every mailbox check on one box's bytes and returns the
// findings ordered by line, column and code. It is pure over its input (the
// LSP runs it on unsaved buffers); the only outside call is opts.Deny.
// Lines are parsed and scanned for secrets in parallel; the result does not
// depend on the number of cores. It never panics on any input, and its work
// per byte is bounded (over-long lines are reported, not parsed).
func Check(ctx context.Context, path string, content []byte, opts CheckOptions) []Finding {
	c := &checker{path: path, content: content}
	if bytes.HasPrefix(content, bom) {
		c.bom = len(bom)
	}
	c.lines = splitLines(content)
	c.results = make([]lineResult, len(c.lines))
	c.analyzeAll()

	var out []Finding
	crlf, firstCRLF := 0, -1
	for i := range c.results {
		r := &c.results[i]
		out = append(out, r.findings...)
		if r.crlf {
			if crlf++; firstCRLF < 0 {
				firstCRLF = i
			}
		}
	}
	if c.bom > 0 {
		out = append(out, c.finding(0, 1, CodeBOM, SeverityWarning, "byte-order mark at start of file; boxes are plain UTF-8 (the mark is ignored)"))
	}
	if crlf > 0 {
		sp := c.lines[firstCRLF]
		out = append(out, c.finding(firstCRLF, sp.end-sp.start, CodeCRLF, SeverityWarning,
			fmt.Sprintf("line ends with CRLF (%d such lines in this file); boxes use LF (the \\r is ignored, ids are unchanged)", crlf)))
	}
	if n := len(content); n > 0 && content[n-1] != '\n' {
		last := len(c.lines) - 1
		sp := c.lines[last]
		out = append(out, c.finding(last, sp.end-sp.start+1, CodeNoFinalNewline, SeverityWarning,
			"no newline at end of file (palace adds one before appending)"))
	}
	out = append(out, c.crossLine(ctx, opts)...)
	if opts.Base != nil {
		out = append(out, historyFindings(c, opts.Base)...)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Col != b.Col {
			return a.Col < b.Col
		}
		return a.Code < b.Code
	})
	return out
}

type span struct{ start, end int } // content[start:end], without the '\n'

type checker struct {
	path    string
	content []byte
	bom     int
	lines   []span
	results []lineResult
}

func splitLines(content []byte) []span {
	spans := make([]span, 0, bytes.Count(content, nl)+1)
	for start := 0; start < len(content); {
		i := bytes.IndexByte(content[start:], '\n')
		if i < 0 {
			spans = append(spans, span{start, len(content)})
			break
		}
		spans = append(spans, span{start, start + i})
		start += i + 1
	}
	return spans
}

// line returns line i's bytes without BOM and '\r', and the number of bytes
// stripped from its start (to turn offsets into columns).
func (c *checker) line(i int) (b []byte, colBase int, crlf bool) {
	sp := c.lines[i]
	b = c.content[sp.start:sp.end]
	if i == 0 && c.bom > 0 {
		b, colBase = b[c.bom:], c.bom
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b, crlf = b[:n-1], true
	}
	return b, colBase, crlf
}

func (c *checker) finding(i, col int, code string, sev Severity, msg string) Finding {
	if col < 1 {
		col = 1
	}
	f := Finding{Path: c.path, Line: i + 1, Col: col, Code: code, Severity: sev, Message: msg}
	if i < len(c.results) {
		f.LetterID = c.results[i].id
	}
	return f
}

// analyzeAll runs the per-line checks and the secret scan, in chunks of
// whole lines across the available cores.
func (c *checker) analyzeAll() {
	type chunk struct{ first, last int }
	var chunks []chunk
	target := max(len(c.content)/(runtime.GOMAXPROCS(0)*4), minChunk)
	for first := 0; first < len(c.lines); {
		last := first
		for last < len(c.lines) && c.lines[last].end-c.lines[first].start < target {
			last++
		}
		if last == first {
			last++
		}
		chunks = append(chunks, chunk{first, last})
		first = last
	}
	if len(chunks) <= 1 {
		for _, ch := range chunks {
			c.analyzeChunk(ch.first, ch.last)
		}
		return
	}
	var wg sync.WaitGroup
	next := make(chan chunk)
	for range min(runtime.GOMAXPROCS(0), len(chunks)) {
		wg.Go(func() {
			for ch := range next {
				c.analyzeChunk(ch.first, ch.last)
			}
		})
	}
	for _, ch := range chunks {
		next <- ch
	}
	close(next)
	wg.Wait()
}

func (c *checker) analyzeChunk(first, last int) {
	for i := first; i < last; i++ {
		c.analyzeLine(i)
	}
	// One scan per chunk: the scanner's lines are the box's lines, shifted.
	text := c.content[c.lines[first].start:c.lines[last-1].end]
	for _, s := range secrets.Scan(text) {
		i := first + s.Line - 1
		f := c.finding(i, s.Column, CodeSecret, SeverityError,
			fmt.Sprintf("secret (%s): %s; remove it, or mark a deliberate fixture with %s", s.Rule, s.Redacted, secrets.AllowPragma))
		f.Rule = s.Rule
		if sp := c.lines[i]; s.Offset+s.Length <= sp.end-c.lines[first].start {
			f.EndCol = s.Column + s.Length
		}
		c.results[i].findings = append(c.results[i].findings, f)
	}
}

func (c *checker) analyzeLine(i int) {
	r := &c.results[i]
	b, colBase, crlf := c.line(i)
	r.crlf = crlf
	if len(bytes.TrimSpace(b)) == 0 {
		r.kind = kindBlank
		r.findings = append(r.findings, c.finding(i, 1, CodeBlankLine, SeverityWarning, "blank line; a box holds one letter per line"))
		r.id = ID(b) // for the history check only; a blank line is no letter
		return
	}
	r.id = ID(b)
	if isConflictMarker(b) {
		r.kind = kindMarker
		r.findings = append(r.findings, c.finding(i, 1, CodeConflict, SeverityError,
			"merge conflict marker; resolve the conflict by keeping both sides' letters (`.palace/inbox.jsonl merge=union` in .gitattributes avoids these)"))
		return
	}
	l, cols, issues := parseLetter(b)
	r.kind = kindLetter
	for _, is := range issues {
		if is.sev == SeverityError {
			r.kind = kindBroken
		}
		col := is.col
		if col > 0 {
			col += colBase
		}
		r.findings = append(r.findings, c.finding(i, col, is.code, is.sev, is.msg))
	}
	if r.kind == kindLetter {
		r.letter, r.cols = l, cols
	}
}

func isConflictMarker(b []byte) bool {
	for _, m := range []string{"<<<<<<<", ">>>>>>>", "|||||||"} {
		if bytes.HasPrefix(b, []byte(m)) {
			return true
		}
	}
	return bytes.Equal(bytes.TrimRight(b, " \t"), []byte("======="))
}
