package rulefiles

import (
	"bytes"
	"fmt"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/palacehq/palace/internal/lazyregexp"
)

// Kind is the format of a rule file, decided by its name.
type Kind string

// The kinds Parse reads.
const (
	KindAgentsMD    Kind = "agents-md"
	KindClaudeMD    Kind = "claude-md"
	KindCursor      Kind = "cursor"
	KindCopilot     Kind = "copilot"
	KindCopilotRepo Kind = "copilot-instructions" // .github/copilot-instructions.md
	KindMarkdown    Kind = "markdown"             // any other: its list items are rules
)

// KindOf decides the kind of a file from its name; ok is false for a name
// that is no rule file (not Markdown, .mdc or text).
func KindOf(name string) (Kind, bool) {
	base := path.Base(strings.ReplaceAll(name, "\\", "/"))
	lower := strings.ToLower(base)
	switch {
	case base == "AGENTS.md" || base == "AGENTS.override.md":
		return KindAgentsMD, true
	case base == "CLAUDE.md" || base == "CLAUDE.local.md":
		return KindClaudeMD, true
	case strings.HasSuffix(lower, ".mdc"):
		return KindCursor, true
	case strings.HasSuffix(lower, ".instructions.md"):
		return KindCopilot, true
	case lower == "copilot-instructions.md":
		return KindCopilotRepo, true
	case strings.HasSuffix(lower, ".md") || strings.HasSuffix(lower, ".markdown") || strings.HasSuffix(lower, ".txt"):
		return KindMarkdown, true
	}
	return "", false
}

// Rule is one rule read from a file.
type Rule struct {
	Line int // 1-based, where it starts
	// Statement is the first sentence, carried across wrapped lines, at
	// most MaxStatementRunes.
	Statement string
	Content   string // the whole rule, when it says more than Statement
	Text      string // as written, list marker and indentation removed
	// Paths is the file's scope (globs, applyTo, a nested AGENTS.md's
	// directory) or a generated rule's own.
	Paths     []string
	Languages []string
	Fields    []string
	// Field, Tier and CardID are a generated rule's; empty for hand-written ones.
	Field     string
	Tier      string
	CardID    string
	Generated bool // read from a palace block
}

// Block is a generated palace block found in a file.
type Block struct {
	Target string `json:"target"`
	Start  int    `json:"start_line"`
	End    int    `json:"end_line"`
	Rules  int    `json:"rules"` // rule items, reference lines excluded
}

// Doc is a parsed rule file.
type Doc struct {
	Kind  Kind
	Paths []string // the declared scope; nil means everywhere
	Rules []Rule
	// Generated lists the palace blocks; their rules are in Rules only with
	// ParseOptions.IncludeGenerated.
	Generated []Block
	Refs      int // generated reference lines
}

// ParseOptions tune Parse.
type ParseOptions struct {
	IncludeGenerated bool // read the rules of palace blocks too
}

// MaxStatementRunes is the longest statement Parse produces (a card's limit).
const MaxStatementRunes = 280

// ParseError is bad input at a line of a file.
type ParseError struct {
	File string
	Line int
	Msg  string
}

func (e *ParseError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

var (
	itemRe     = lazyregexp.New(`^( *)([-*+]|\d{1,9}[.)])(?:[ \t]+(.*))?$`)
	headingRe  = lazyregexp.New(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t#]*$`)
	refRe      = lazyregexp.New("^ref `[^`]+`:")
	backtickRe = lazyregexp.New("`([^`]*)`")
)

// Parse reads the rules of data, the file name (slash-separated, relative to
// the repository root). Binary data, invalid UTF-8, conflict markers, an
// unclosed front matter or block, a malformed front matter line or glob are
// a *ParseError with the line.
func Parse(name string, data []byte, o ParseOptions) (Doc, error) {
	kind, ok := KindOf(name)
	if !ok {
		return Doc{}, &ParseError{File: name, Line: 1, Msg: "not a rule file: import AGENTS.md, CLAUDE.md, *.mdc, *.instructions.md, copilot-instructions.md or a Markdown list (.md)"}
	}
	if err := checkBytes(name, data); err != nil {
		return Doc{}, err
	}
	lines := strings.Split(string(data), "\n")
	for i := range lines {
		lines[i] = strings.TrimSuffix(lines[i], "\r")
	}
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	if err := checkConflicts(name, lines); err != nil {
		return Doc{}, err
	}
	d := Doc{Kind: kind}
	body := 0
	if len(lines) > 0 && strings.TrimSpace(lines[0]) == "---" {
		fm, end, err := parseFrontMatter(name, lines)
		if err != nil {
			return Doc{}, err
		}
		body = end
		if d.Paths, err = declaredScope(name, kind, fm); err != nil {
			return Doc{}, err
		}
	}
	if (kind == KindAgentsMD || kind == KindClaudeMD) && d.Paths == nil {
		// A nested AGENTS.md governs its directory's subtree.
		if dir := path.Dir(strings.ReplaceAll(name, "\\", "/")); dir != "." && dir != "/" && !path.IsAbs(dir) && !strings.HasPrefix(dir, "..") {
			d.Paths = []string{dir + "/**"}
		}
	}
	s := scanner{name: name, doc: &d, opts: o}
	if err := s.scan(lines, body); err != nil {
		return Doc{}, err
	}
	return d, nil
}

// checkBytes refuses binary data and invalid UTF-8, naming the line.
func checkBytes(name string, data []byte) error {
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return &ParseError{File: name, Line: lineAt(data, i), Msg: "binary data (a NUL byte): import text files only"}
	}
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return &ParseError{File: name, Line: lineAt(data, i), Msg: "not valid UTF-8: save the file as UTF-8 text"}
		}
		i += size
	}
	return nil
}

func lineAt(data []byte, off int) int { return bytes.Count(data[:off], []byte("\n")) + 1 }

// checkConflicts refuses merge conflict markers: an import would record half of each side.
func checkConflicts(name string, lines []string) error {
	for i, l := range lines {
		for _, p := range []string{"<<<<<<<", ">>>>>>>"} {
			if strings.HasPrefix(l, p) && (len(l) == 7 || l[7] == ' ') {
				return &ParseError{File: name, Line: i + 1, Msg: "merge conflict marker: resolve the conflict, then import again"}
			}
		}
	}
	return nil
}

// frontMatter is the lenient YAML subset rule files use (`key: value`,
// `key: [a, b]`, `- item` lines), read as text: Cursor's unquoted
// `globs: **/*.ts` is no valid YAML.
type frontMatter struct {
	values map[string][]string
	lines  map[string]int
}

func parseFrontMatter(name string, lines []string) (frontMatter, int, error) {
	fm := frontMatter{values: map[string][]string{}, lines: map[string]int{}}
	key := ""
	block := false
	for i := 1; i < len(lines); i++ {
		l := lines[i]
		t := strings.TrimSpace(l)
		if t == "---" || t == "..." {
			return fm, i + 1, nil
		}
		switch {
		case t == "" || strings.HasPrefix(t, "#"):
		case strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t"):
			if key == "" {
				return fm, 0, &ParseError{File: name, Line: i + 1, Msg: "front matter line is indented but follows no key: write `key: value`"}
			}
			if strings.HasPrefix(t, "- ") || t == "-" {
				fm.values[key] = append(fm.values[key], unquote(strings.TrimSpace(strings.TrimPrefix(t, "-"))))
			} else if block {
				fm.values[key] = append(fm.values[key], t)
			}
		default:
			k, v, ok := strings.Cut(l, ":")
			if !ok || strings.TrimSpace(k) == "" || strings.ContainsAny(k, " \t") {
				return fm, 0, &ParseError{File: name, Line: i + 1, Msg: fmt.Sprintf("front matter line %q is not `key: value`: fix it, or close the front matter with ---", truncate(t, 60))}
			}
			key, block = k, false
			fm.lines[key] = i + 1
			v = strings.TrimSpace(v)
			switch {
			case v == "" || v == "~" || v == "null":
				fm.values[key] = nil
			case v == ">" || v == "|" || v == ">-" || v == "|-":
				block = true
			case strings.HasPrefix(v, "["):
				if !strings.HasSuffix(v, "]") {
					return fm, 0, &ParseError{File: name, Line: i + 1, Msg: fmt.Sprintf("%s: a [ list must close on the same line with ]", key)}
				}
				var items []string
				for _, it := range splitTop(v[1 : len(v)-1]) {
					if it = unquote(strings.TrimSpace(it)); it != "" {
						items = append(items, it)
					}
				}
				fm.values[key] = items
			default:
				fm.values[key] = []string{unquote(v)}
			}
		}
	}
	return fm, 0, &ParseError{File: name, Line: 1, Msg: "front matter opened with --- is not closed: add a --- line after it"}
}

func unquote(v string) string {
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		if u, err := strconv.Unquote(v); err == nil {
			return u
		}
		return v[1 : len(v)-1]
	}
	if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
		return strings.ReplaceAll(v[1:len(v)-1], "''", "'")
	}
	return v
}

// declaredScope reads the path scope a Cursor or Copilot file declares.
// Cursor's alwaysApply and Copilot's `**` mean everywhere (nil).
func declaredScope(name string, kind Kind, fm frontMatter) ([]string, error) {
	key := ""
	switch kind {
	case KindCursor:
		key = "globs"
		if v := fm.values["alwaysApply"]; len(v) == 1 && strings.EqualFold(v[0], "true") {
			return nil, nil
		}
	case KindCopilot:
		key = "applyTo"
	default:
		return nil, nil
	}
	var globs []string
	for _, v := range fm.values[key] {
		globs = append(globs, splitList(v)...)
	}
	for _, g := range globs {
		if g == "**" || g == "**/*" {
			return nil, nil
		}
		if !doublestar.ValidatePattern(g) {
			return nil, &ParseError{File: name, Line: fm.lines[key], Msg: fmt.Sprintf("%s pattern %q is not a valid glob (an unclosed [ or {): fix the pattern", key, g)}
		}
	}
	return globs, nil
}

// scanner walks a file's body.
type scanner struct {
	name string
	doc  *Doc
	opts ParseOptions

	rule  *pending // the list item being read
	para  *pending
	paras []*pending
	items int

	inBlock bool
	block   Block
	field   string
}

// pending is a rule being read: its lines, dedented.
type pending struct {
	line      int
	lines     []string
	indent    int
	generated bool
	field     string
	blank     bool
}

func (s *scanner) scan(lines []string, from int) error {
	fence := ""
	for i := from; i < len(lines); i++ {
		ln, l := i+1, lines[i]
		t := strings.TrimSpace(l)
		if fence == "" && strings.HasPrefix(l, beginPrefix) {
			if s.inBlock {
				return &ParseError{File: s.name, Line: ln, Msg: fmt.Sprintf("a second palace:begin inside the block opened on line %d: remove one", s.block.Start)}
			}
			s.closeAll()
			s.inBlock = true
			s.block = Block{Target: strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(l, beginPrefix), "-->")), Start: ln}
			s.field = ""
			continue
		}
		if fence == "" && strings.TrimRight(l, " \t") == endMarker {
			if !s.inBlock {
				return &ParseError{File: s.name, Line: ln, Msg: "palace:end without a palace:begin before it: remove it, or restore the begin line"}
			}
			s.closeAll()
			s.block.End = ln
			s.doc.Generated = append(s.doc.Generated, s.block)
			s.inBlock = false
			continue
		}
		skip := s.inBlock && !s.opts.IncludeGenerated
		if fence != "" || isFence(t) {
			fence = nextFence(fence, t)
			if !skip {
				s.continueRule(l, true)
			}
			continue
		}
		if skip {
			if strings.HasPrefix(l, "- ") && !refRe.MatchString(l[2:]) {
				s.block.Rules++
			}
			continue
		}
		switch m := itemRe.FindStringSubmatch(l); {
		case t == "":
			if s.rule != nil {
				s.rule.blank = true
			}
			s.closePara()
		case s.rule != nil && indentOf(l) >= 2:
			s.continueRule(l, false)
		case strings.HasPrefix(t, "<!--") || strings.HasPrefix(t, "|"):
			s.closePara()
		case headingRe.MatchString(l):
			s.closeAll()
			if s.inBlock {
				if h := headingRe.FindStringSubmatch(l); len(h[1]) == 3 {
					s.field = strings.TrimSpace(h[2])
				}
			}
		case m != nil:
			s.closeAll()
			if strings.TrimSpace(m[3]) == "" {
				continue
			}
			if s.inBlock && refRe.MatchString(m[3]) {
				s.doc.Refs++
				continue
			}
			s.items++
			s.rule = &pending{line: ln, lines: []string{strings.TrimSpace(m[3])}, indent: len(m[1]) + len(m[2]) + 1, generated: s.inBlock, field: s.field}
		case s.rule != nil && !s.rule.blank:
			s.continueRule(l, false)
		default:
			s.closeRule()
			if s.para == nil {
				s.para = &pending{line: ln}
			}
			s.para.lines = append(s.para.lines, t)
		}
	}
	if s.inBlock {
		return &ParseError{File: s.name, Line: s.block.Start, Msg: "palace:begin without a palace:end: restore the end line (<!-- palace:end -->) or remove the block"}
	}
	s.closeAll()
	// A file without list items states its rules as paragraphs.
	if s.items == 0 {
		for _, p := range s.paras {
			s.emit(p)
		}
	}
	return nil
}

func indentOf(l string) int { return len(l) - len(strings.TrimLeft(l, " \t")) }

// continueRule adds a line to the open rule, dedented by its content indent.
func (s *scanner) continueRule(l string, verbatim bool) {
	r := s.rule
	if r == nil {
		return
	}
	if r.blank {
		r.lines = append(r.lines, "")
		r.blank = false
	}
	cut := min(indentOf(l), r.indent)
	if !verbatim && indentOf(l) < r.indent {
		cut = indentOf(l)
	}
	r.lines = append(r.lines, strings.TrimRight(l[cut:], " \t"))
}

func (s *scanner) closeAll() {
	s.closeRule()
	s.closePara()
}

func (s *scanner) closeRule() {
	if s.rule != nil {
		s.emit(s.rule)
		s.rule = nil
	}
}

func (s *scanner) closePara() {
	if s.para != nil {
		s.paras = append(s.paras, s.para)
		s.para = nil
	}
}

// emit turns a pending rule into a Rule.
func (s *scanner) emit(p *pending) {
	for len(p.lines) > 0 && strings.TrimSpace(p.lines[len(p.lines)-1]) == "" {
		p.lines = p.lines[:len(p.lines)-1]
	}
	if len(p.lines) == 0 {
		return
	}
	r := Rule{Line: p.line, Paths: s.doc.Paths}
	head := p.lines[0]
	if p.generated {
		r.Generated, r.Field = true, p.field
		head = s.readAnnotation(&r, head)
		r.Statement = head
		r.Content = strings.Join(p.lines[1:], "\n")
		r.Text = strings.Join(append([]string{head}, p.lines[1:]...), "\n")
		s.doc.Rules = append(s.doc.Rules, r)
		return
	}
	if len(p.lines) > 1 && p.indent == 0 {
		// A paragraph: its lines are one text.
		head = strings.Join(p.lines, " ")
		p.lines = []string{head}
	}
	r.Text = strings.Join(p.lines, "\n")
	r.Statement = statementOf(sentenceHead(p.lines))
	if r.Text != r.Statement {
		r.Content = r.Text
	}
	s.doc.Rules = append(s.doc.Rules, r)
}

// readAnnotation takes the trailing (`kc_…` · tier · status · paths … ·
// languages … · fields …) off a generated rule's head.
func (s *scanner) readAnnotation(r *Rule, head string) string {
	i := strings.LastIndex(head, " (`")
	if i < 0 || !strings.HasSuffix(head, ")") {
		return head
	}
	parts := strings.Split(head[i+2:len(head)-1], " · ")
	if len(parts) < 3 || !strings.HasPrefix(parts[0], "`") || !strings.HasSuffix(parts[0], "`") {
		return head
	}
	r.CardID = strings.Trim(parts[0], "`")
	r.Tier = parts[1]
	r.Paths = nil
	for _, p := range parts[3:] {
		switch {
		case strings.HasPrefix(p, "paths "):
			for _, m := range backtickRe.FindAllStringSubmatch(p, -1) {
				r.Paths = append(r.Paths, m[1])
			}
		case strings.HasPrefix(p, "languages "):
			r.Languages = strings.Split(strings.TrimPrefix(p, "languages "), ", ")
		case strings.HasPrefix(p, "fields "):
			r.Fields = strings.Split(strings.TrimPrefix(p, "fields "), ", ")
		}
	}
	return head[:i]
}

// sentenceHead is a rule's first line carried through its continuation lines
// to the end of its sentence, a blank line, a nested item or a code fence.
func sentenceHead(lines []string) string {
	head := strings.TrimSpace(lines[0])
	for _, l := range lines[1:] {
		if endsSentence(head) {
			break
		}
		t := strings.TrimSpace(l)
		if t == "" || isFence(t) || listMarker(t) {
			break
		}
		first := len(head)
		head += " " + t
		// Stop at the end of the sentence, not of the line it ends on.
		if i := strings.IndexAny(head[first:], ".!?"); i >= 0 {
			end := first + i + 1
			if end == len(head) || head[end] == ' ' {
				return head[:end]
			}
		}
	}
	return head
}

// endsSentence says whether s ends a sentence (or introduces what follows).
func endsSentence(s string) bool {
	s = strings.TrimRight(s, `"')*_`+"`")
	return s != "" && strings.ContainsAny(s[len(s)-1:], ".!?:;")
}

// listMarker says whether a line starts a list item: "- ", "* ", "+ ", "1. ".
func listMarker(t string) bool {
	if len(t) >= 2 && strings.ContainsAny(t[:1], "-*+") && t[1] == ' ' {
		return true
	}
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	return i > 0 && i+1 < len(t) && (t[i] == '.' || t[i] == ')') && t[i+1] == ' '
}

// statementOf is the short form of a rule's first line: the line, or its
// first sentence, or its first MaxStatementRunes runes cut at a space.
func statementOf(head string) string {
	head = strings.TrimSpace(head)
	if utf8.RuneCountInString(head) <= MaxStatementRunes {
		return head
	}
	if i := strings.Index(head, ". "); i > 0 && utf8.RuneCountInString(head[:i+1]) <= MaxStatementRunes {
		return head[:i+1]
	}
	return truncate(head, MaxStatementRunes)
}
