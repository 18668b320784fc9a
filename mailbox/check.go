package mailbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"github.com/palacehq/palace/internal/finding"
)

// Severity of a finding: any error fails the hook, warnings alone do not.
type Severity = finding.Severity

const (
	SeverityError   = finding.Error
	SeverityWarning = finding.Warning
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
	// CodePolicyDeny is a palace.mailbox deny message; a message may start
	// with its own code in PM102–PM199 ("PM120: …").
	CodePolicyDeny  = "PM100"
	CodePolicyError = "PM101" // the policy failed: the letter is refused
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

// Finding is one problem in a box. Col counts bytes of the line as stored
// (a BOM on line 1 counts); the LSP converts to UTF-16.
type Finding struct {
	finding.Finding
	LetterID string `json:"letter_id,omitempty"`
	Rule     string `json:"rule,omitempty"` // secret rule (PM003) or policy origin
}

// HasErrors reports whether any finding is an error.
func HasErrors(fs []Finding) bool { return finding.HasErrors(fs) }

// CheckOptions configures Check. The zero value checks a repo box on its own.
type CheckOptions struct {
	// Base is the committed box (HEAD): when non-nil, every committed line
	// must still be there, unchanged and in place (PM006).
	Base []byte
	// Global: letters naming a project are errors (PM008), DenyInput.Box is "global".
	Global bool
	// KnownIDs also accepts answers to letters outside the file before PM007 warns.
	KnownIDs func(id string) bool
	Deny     DenyRules // the team's rules, run on every valid letter
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

// lineResult is what the parallel phase learns about one line besides its
// findings: small (one per line) and holding none of the line's bytes,
// which CheckReader reuses.
type lineResult struct {
	// extra holds what the cross-line checks read; nil for most letters.
	extra *lineExtra
	n     int32 // length without '\n' (boxes are bounded by MaxBoxBytes)
	id    letterID
	kind  lineKind
	crlf  bool
}

// lineExtra is the part of a letter kept after its line is analysed.
type lineExtra struct {
	answers    []string
	repo       string // only when it names a project and the box is global
	colAnswers int
	colRepo    int
	letter     *Letter // only when team rules run
}

// letterID is a letter id before it is rendered as hex (see ID).
type letterID [6]byte

func (id letterID) String() string { return hex.EncodeToString(id[:]) }

// lineID is ID without the hex.
func lineID(line []byte) letterID {
	sum := sha256.Sum256(trimEOL(line))
	return letterID(sum[:6])
}

// Check runs every mailbox check on one box's bytes and returns the
// findings ordered by line, column and code. It is pure over its input but
// for opts.Deny, its result does not depend on the number of cores, it never
// panics, and its work per byte is bounded (over-long lines are not parsed).
func Check(ctx context.Context, path string, content []byte, opts CheckOptions) []Finding {
	c := newChecker(path, opts)
	c.compareBase(content)
	c.analyzeBytes(content)
	c.size = len(content)
	if n := len(content); n > 0 && content[n-1] != '\n' {
		c.noFinalNewline = true
	}
	return c.finish(ctx)
}

type checker struct {
	path           string
	opts           CheckOptions
	bom            int // length of a leading byte-order mark
	chunks         []chunkResult
	nlines         int
	size           int
	noFinalNewline bool
	// baseMatched counts the leading bytes of opts.Base the box repeats
	// (while !baseDiffers): the history fast path.
	baseMatched int
	baseDiffers bool
}

func newChecker(path string, opts CheckOptions) *checker {
	return &checker{path: path, opts: opts}
}

// finish runs the file-level, cross-line and history checks and sorts the findings.
func (c *checker) finish(ctx context.Context) []Finding {
	var out []Finding
	for _, ch := range c.chunks {
		out = append(out, ch.findings...)
	}
	crlf, firstCRLF := 0, -1
	c.each(func(i int, r *lineResult) {
		if r.crlf {
			if crlf++; firstCRLF < 0 {
				firstCRLF = i
			}
		}
	})
	if c.bom > 0 {
		out = append(out, c.finding(0, 1, CodeBOM, SeverityWarning, "byte-order mark at start of file; boxes are plain UTF-8 (the mark is ignored)"))
	}
	if crlf > 0 {
		out = append(out, c.finding(firstCRLF, int(c.result(firstCRLF).n), CodeCRLF, SeverityWarning,
			fmt.Sprintf("line ends with CRLF (%d such lines in this file); boxes use LF (the \\r is ignored, ids are unchanged)", crlf)))
	}
	if c.noFinalNewline {
		last := c.nlines - 1
		out = append(out, c.finding(last, int(c.result(last).n)+1, CodeNoFinalNewline, SeverityWarning,
			"no newline at end of file (palace adds one before appending)"))
	}
	out = append(out, c.crossLine(ctx, c.opts)...)
	if c.opts.Base != nil {
		out = append(out, historyFindings(c, c.opts.Base)...)
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

func (c *checker) result(i int) *lineResult {
	k := sort.Search(len(c.chunks), func(k int) bool { return c.chunks[k].first > i }) - 1
	return &c.chunks[k].res[i-c.chunks[k].first]
}

func (c *checker) each(fn func(i int, r *lineResult)) {
	for k := range c.chunks {
		ch := &c.chunks[k]
		for j := range ch.res {
			fn(ch.first+j, &ch.res[j])
		}
	}
}

// finding makes a finding on line i (0-based) of the box; the line's letter
// id is filled in once the line is analysed.
func (c *checker) finding(i, col int, code string, sev Severity, msg string) Finding {
	f := newFinding(c.path, i, col, code, sev, msg)
	if i < c.nlines {
		f.LetterID = c.result(i).id.String()
	}
	return f
}

func newFinding(path string, i, col int, code string, sev Severity, msg string) Finding {
	if col < 1 {
		col = 1
	}
	return Finding{Finding: finding.Finding{Path: path, Line: i + 1, Col: col, Code: code, Severity: sev, Message: msg}}
}

// lineOf strips a BOM (first: line 1) and a '\r', returning how many bytes
// left the start (to turn offsets into columns).
func lineOf(b []byte, first bool, bomLen int) (line []byte, colBase int, crlf bool) {
	if first && bomLen > 0 {
		b, colBase = b[bomLen:], bomLen
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b, crlf = b[:n-1], true
	}
	return b, colBase, crlf
}

// analyzeLine checks one line (raw, without its '\n') into r and appends its
// findings, numbered by i within the chunk, to fs.
func (c *checker) analyzeLine(r *lineResult, fs *[]Finding, raw []byte, i int, firstOfBox bool) {
	r.n = int32(len(raw))
	b, colBase, crlf := lineOf(raw, firstOfBox, c.bom)
	r.crlf = crlf
	r.id = lineID(b) // every line has one, blank lines too (the history check compares them)
	add := func(col int, code string, sev Severity, msg string) {
		f := newFinding(c.path, i, col, code, sev, msg)
		f.LetterID = r.id.String()
		*fs = append(*fs, f)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		r.kind = kindBlank
		// A blank line is no letter: its finding names no id.
		*fs = append(*fs, newFinding(c.path, i, 1, CodeBlankLine, SeverityWarning, "blank line; a box holds one letter per line"))
		return
	}
	if isConflictMarker(b) {
		r.kind = kindMarker
		add(1, CodeConflict, SeverityError,
			"merge conflict marker; resolve the conflict by keeping both sides' letters (`.palace/inbox.jsonl merge=union` in .gitattributes avoids these)")
		return
	}
	l, cols, issues := parseLetterView(b)
	r.kind = kindLetter
	for _, is := range issues {
		if is.sev == SeverityError {
			r.kind = kindBroken
		}
		col := is.col
		if col > 0 {
			col += colBase
		}
		add(col, is.code, is.sev, is.msg)
	}
	if r.kind == kindLetter {
		r.extra = c.keep(&l, &cols)
	}
}

// keep copies out of a letter (whose strings may share the line's bytes)
// what the cross-line checks read.
func (c *checker) keep(l *Letter, cols *fieldCols) *lineExtra {
	projectInGlobal := c.opts.Global && !NamesNoProject(l.Repo)
	if c.opts.Deny == nil && len(l.Answers) == 0 && !projectInGlobal {
		return nil
	}
	ex := &lineExtra{colAnswers: cols[fAnswers], colRepo: cols[fRepo]}
	if c.opts.Deny != nil {
		kept := cloneLetter(*l)
		ex.letter = &kept
		ex.answers = kept.Answers
		if projectInGlobal {
			ex.repo = kept.Repo
		}
		return ex
	}
	ex.answers = cloneStrings(l.Answers)
	if projectInGlobal {
		ex.repo = strings.Clone(l.Repo)
	}
	return ex
}

func cloneLetter(l Letter) Letter {
	for f := range fAnswers {
		p := stringField(&l, f)
		*p = strings.Clone(*p)
	}
	l.Answers = cloneStrings(l.Answers)
	l.External.Ref = strings.Clone(l.External.Ref)
	return l
}

func cloneStrings(s []string) []string {
	if s == nil {
		return nil
	}
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = strings.Clone(v)
	}
	return out
}

func isConflictMarker(b []byte) bool {
	for _, m := range []string{"<<<<<<<", ">>>>>>>", "|||||||"} {
		if bytes.HasPrefix(b, []byte(m)) {
			return true
		}
	}
	return bytes.Equal(bytes.TrimRight(b, " \t"), []byte("======="))
}
