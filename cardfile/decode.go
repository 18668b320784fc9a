package cardfile

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/palacehq/palace/internal/finding"
	"github.com/palacehq/palace/internal/lazyregexp"
	"github.com/palacehq/palace/internal/trigger"
)

// Severity of a finding: any error makes a file unusable, warnings do not.
type Severity = finding.Severity

const (
	SeverityError   = finding.Error
	SeverityWarning = finding.Warning
)

// Finding codes, stable: hooks, editors and docs key on them. Decode reports
// PC001–PC010 and PC015; the host adds the rest.
const (
	CodeFrontMatter  = "PC001"
	CodeYAML         = "PC002"
	CodeUnknownKey   = "PC003"
	CodeMissing      = "PC004"
	CodeValue        = "PC005"
	CodeConflict     = "PC006"
	CodeTooLarge     = "PC007"
	CodeUTF8         = "PC008"
	CodeFileName     = "PC009"
	CodeCitation     = "PC010"
	CodeDuplicateID  = "PC011"
	CodeGate         = "PC012"
	CodeSecret       = "PC013"
	CodeLocal        = "PC014"
	CodeLineEndings  = "PC015"
	CodeEvidenceSame = "PC016"
	CodeRead         = "PC017"
	CodeUncommitted  = "PC018"
	CodeReference    = "PC019"
	CodeRedacted     = "PC020"
	CodeNotRegular   = "PC021"
)

// CodeInfo documents one finding code.
type CodeInfo struct {
	Code     string   `json:"code"`
	Severity Severity `json:"severity"`
	Summary  string   `json:"summary"`
}

// Codes lists every finding code with its severity and meaning.
func Codes() []CodeInfo {
	return []CodeInfo{
		{CodeFrontMatter, SeverityError, "no YAML front matter: the file must start with a --- line and close it with another"},
		{CodeYAML, SeverityError, "front matter is not valid YAML, or a key holds the wrong kind of value"},
		{CodeUnknownKey, SeverityError, "unknown or repeated key"},
		{CodeMissing, SeverityError, "required key missing or empty"},
		{CodeValue, SeverityError, "value not allowed: unknown tier, status, domain, role…, bad id or date, over-long statement, triggers over their limits or a pattern that does not compile"},
		{CodeConflict, SeverityError, "merge conflict marker line"},
		{CodeTooLarge, SeverityError, fmt.Sprintf("file over %d bytes", MaxFileBytes)},
		{CodeUTF8, SeverityError, "invalid UTF-8"},
		{CodeFileName, SeverityError, "file name is not the card id plus .md"},
		{CodeCitation, SeverityError, "citation without its evidence in the file, or a content hash that does not match"},
		{CodeDuplicateID, SeverityError, "two card files with the same id"},
		{CodeGate, SeverityError, "status promoted/canonical not allowed by the repository's gate policy"},
		{CodeSecret, SeverityError, "a secret in the card or its evidence (shown redacted)"},
		{CodeLocal, SeverityError, "the file and this palace disagree (sync conflict, or an id held by another anchor)"},
		{CodeLineEndings, SeverityWarning, "CRLF line endings (read as LF; palace writes LF)"},
		{CodeEvidenceSame, SeverityError, "one evidence id with two different contents"},
		{CodeRead, SeverityError, "the file could not be read (a git object missing, or a file removed or replaced by something that is not a regular file while palace read it)"},
		{CodeUncommitted, SeverityWarning, "untracked or modified in the working tree: palace sync imports committed card files only"},
		{CodeReference, SeverityError, "a reference the palace cannot trust: origin_card names no card here, or an evidence id is held at another anchor (the file is skipped)"},
		{CodeRedacted, SeverityWarning, "redacted evidence: its content cannot be checked against its hash, so it is not imported"},
		{CodeNotRegular, SeverityWarning, "committed as a symbolic link or a submodule, not a regular file: ignored"},
	}
}

// Finding is one problem in a card file.
type Finding struct {
	finding.Finding
	CardID string `json:"card_id,omitempty"` // as the file declares it
}

// HasErrors reports whether any finding is an error.
func HasErrors(fs []Finding) bool { return finding.HasErrors(fs) }

// Parsed is a decoded card file with the lines of its parts, for later checks.
type Parsed struct {
	Card          Card
	Lines         map[string]int // by top-level key
	CitationLines []int
	EvidenceLines []int
}

// Line is the file line of top-level key k, or 1 when it is absent.
func (p Parsed) Line(k string) int {
	if n, ok := p.Lines[k]; ok {
		return n
	}
	return 1
}

var (
	cardIDRe     = lazyregexp.New(`^kc_[0-9a-z]{1,64}$`)
	evidenceIDRe = lazyregexp.New(`^ev_[0-9a-z]{1,64}$`)
	sha256Re     = lazyregexp.New(`^[0-9a-f]{64}$`)
	yamlLineRe   = lazyregexp.New(`line (\d+)`)
)

type decoder struct {
	path     string
	findings []Finding
	id       string
}

// maxFindings bounds the findings of one file, which a crafted file could
// otherwise make by the million.
const maxFindings = 100

func (d *decoder) add(line int, code string, format string, args ...any) {
	if line < 1 {
		line = 1
	}
	if len(d.findings) >= maxFindings {
		if len(d.findings) == maxFindings {
			d.findings = append(d.findings, Finding{Finding: finding.Finding{Path: d.path, Line: line, Col: 1, Code: code, Severity: SeverityError,
				Message: fmt.Sprintf("more than %d problems: fix these first", maxFindings)}})
		}
		return
	}
	d.findings = append(d.findings, Finding{Finding: finding.Finding{Path: d.path, Line: line, Col: 1, Code: code,
		Severity: SeverityError, Message: fmt.Sprintf(format, args...)}})
}

// Decode parses and validates b, the card file at path ("" skips the file
// name check). The card is usable only without error findings. Decode never
// panics and reads nothing but b.
func Decode(path string, b []byte) (Parsed, []Finding) {
	d := &decoder{path: path}
	p := d.decode(b)
	for i := range d.findings {
		d.findings[i].CardID = d.id
	}
	return p, d.findings
}

func (d *decoder) decode(b []byte) Parsed {
	p := Parsed{Lines: map[string]int{}}
	if len(b) > MaxFileBytes {
		d.add(1, CodeTooLarge, "file is %d bytes, over the %d-byte limit for a card file: a card is a short statement with its evidence; remove the file or split what it holds", len(b), MaxFileBytes)
		return p
	}
	if !utf8.Valid(b) {
		d.add(lineOf(b, firstInvalid(b)), CodeUTF8, "invalid UTF-8: card files are UTF-8 text; re-save the file as UTF-8")
		return p
	}
	if markers := conflictLines(b); len(markers) > 0 {
		for _, n := range markers {
			d.add(n, CodeConflict, "merge conflict marker: resolve the merge (keep one version of the card, or run palace sync to see both) and remove the markers")
		}
		return p
	}
	if bytes.Contains(b, []byte("\r\n")) {
		d.findings = append(d.findings, Finding{Finding: finding.Finding{Path: d.path, Line: lineOf(b, bytes.Index(b, []byte("\r\n"))), Col: 1,
			Code: CodeLineEndings, Severity: SeverityWarning,
			Message: "CRLF line endings: read as LF; palace writes LF (add `.palace/cards/*.md text eol=lf` to .gitattributes)"}})
		b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	}
	fm, body, ok := split(b)
	if !ok {
		d.add(1, CodeFrontMatter, "no YAML front matter: a card file starts with a line \"---\", the card's fields, and another \"---\" line")
		return p
	}
	if fast, ok := decodeFast(fm); ok {
		p, d.id = fast, fast.Card.ID
	} else {
		var root yaml.Node
		if err := yaml.Unmarshal(fm, &root); err != nil {
			d.add(yamlLine(err)+1, CodeYAML, "front matter is not valid YAML: %s", yamlMessage(err))
			return p
		}
		if len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
			d.add(2, CodeYAML, "front matter must be a mapping of keys (id:, statement:, …)")
			return p
		}
		d.card(root.Content[0], &p)
	}
	c := &p.Card
	if c.Content != "" && body != "" {
		d.add(p.Line("content"), CodeUnknownKey, "content is given both as the content: key and as the body: keep one")
	}
	if c.Content == "" {
		c.Content = strings.TrimSuffix(body, "\n")
	}
	d.validate(&p)
	if d.path != "" && c.ID != "" && baseName(d.path) != FileName(c.ID) {
		d.add(p.Line("id"), CodeFileName, "file name %s does not match the card id %s: name the file %s", baseName(d.path), c.ID, FileName(c.ID))
	}
	return p
}

func baseName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

// split cuts b into the front matter between the first two "---" lines and the body.
func split(b []byte) (fm []byte, body string, ok bool) {
	if !bytes.HasPrefix(b, []byte("---\n")) {
		return nil, "", false
	}
	rest := b[4:]
	if bytes.HasPrefix(rest, []byte("---\n")) || string(rest) == "---" {
		return nil, "", true
	}
	i := bytes.Index(rest, []byte("\n---\n"))
	if i < 0 {
		if bytes.HasSuffix(rest, []byte("\n---")) {
			return rest[:len(rest)-3], "", true
		}
		return nil, "", false
	}
	return rest[:i+1], string(rest[i+5:]), true
}

func conflictLines(b []byte) []int {
	var out []int
	line, open := 1, false
	for len(b) > 0 {
		end := bytes.IndexByte(b, '\n')
		l := b
		if end >= 0 {
			l = b[:end]
		}
		switch {
		case bytes.HasPrefix(l, []byte("<<<<<<<")):
			open = true
			out = append(out, line)
		case bytes.HasPrefix(l, []byte(">>>>>>>")), bytes.HasPrefix(l, []byte("|||||||")):
			out = append(out, line)
		case open && bytes.Equal(bytes.TrimRight(l, "\r"), []byte("=======")):
			// Alone, ======= is a Markdown heading underline.
			out = append(out, line)
		}
		if end < 0 {
			break
		}
		b = b[end+1:]
		line++
	}
	return out
}

func firstInvalid(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

func lineOf(b []byte, off int) int { return bytes.Count(b[:off], []byte("\n")) + 1 }

// yamlLine finds the line a YAML error's text names ("yaml: line 3: …").
func yamlLine(err error) int {
	if m := yamlLineRe.FindStringSubmatch(err.Error()); m != nil {
		if n, e := strconv.Atoi(m[1]); e == nil {
			return n
		}
	}
	return 1
}

func yamlMessage(err error) string {
	s := strings.TrimPrefix(err.Error(), "yaml: ")
	if i := strings.Index(s, ": "); i >= 0 && strings.HasPrefix(s, "line ") {
		s = s[i+2:]
	}
	return s
}

// fileLine turns a front matter line into a file line.
func fileLine(n *yaml.Node) int { return n.Line + 1 }

// mapping walks a mapping node, reporting unknown and repeated keys, and
// calls fn for each known key's value.
func (d *decoder) mapping(n *yaml.Node, where string, known []string, fn func(key string, keyLine int, v *yaml.Node)) {
	if n.Kind != yaml.MappingNode {
		d.add(fileLine(n), CodeYAML, "%s must be a mapping of keys", where)
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content) && len(d.findings) <= maxFindings; i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch {
		case !slices.Contains(known, k.Value):
			d.add(fileLine(k), CodeUnknownKey, "unknown key %q in %s: the keys are %s", k.Value, where, strings.Join(known, ", "))
		case seen[k.Value]:
			d.add(fileLine(k), CodeUnknownKey, "key %q repeated in %s: keep one", k.Value, where)
		default:
			seen[k.Value] = true
			fn(k.Value, fileLine(k), v)
		}
	}
}

func (d *decoder) str(v *yaml.Node, key string) string {
	if v.Kind != yaml.ScalarNode {
		d.add(fileLine(v), CodeYAML, "%s must be a single value, not a list or mapping", key)
		return ""
	}
	if v.Tag == "!!null" {
		return ""
	}
	return v.Value
}

func (d *decoder) list(v *yaml.Node, key string) []string {
	if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
		return []string{}
	}
	if v.Kind != yaml.SequenceNode {
		d.add(fileLine(v), CodeYAML, "%s must be a list ([a, b] or one \"- item\" per line)", key)
		return []string{}
	}
	out := make([]string, 0, len(v.Content))
	for _, it := range v.Content {
		if s := d.str(it, key+" item"); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// mappingNames are how findings name each struct type's mapping, and its keys' prefix.
var mappingNames = map[reflect.Type][2]string{
	reflect.TypeFor[Card]():     {"the card", ""},
	reflect.TypeFor[Scope]():    {"scope", "scope."},
	reflect.TypeFor[Triggers](): {"triggers", "triggers."},
	reflect.TypeFor[Event]():    {"last_event", "last_event."},
	reflect.TypeFor[Reviewer](): {"last_event.reviewer", "reviewer."},
	reflect.TypeFor[Citation](): {"a citation", "citation "},
	reflect.TypeFor[Evidence](): {"an evidence entry", "evidence "},
}

func (d *decoder) card(n *yaml.Node, p *Parsed) {
	d.object(n, reflect.ValueOf(&p.Card).Elem(), p)
}

// object fills the struct v from mapping n by its yaml tags, recording the
// lines of the card's keys and list items in p.
func (d *decoder) object(n *yaml.Node, v reflect.Value, p *Parsed) {
	t := v.Type()
	names := mappingNames[t]
	known := make([]string, t.NumField())
	for i := range known {
		known[i], _, _ = strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
	}
	top := t == reflect.TypeFor[Card]()
	d.mapping(n, names[0], known, func(key string, line int, val *yaml.Node) {
		f := v.Field(slices.Index(known, key))
		label := names[1] + key
		if top {
			p.Lines[key] = line
		}
		switch f.Kind() {
		case reflect.String:
			f.SetString(d.str(val, label))
			if top && key == "id" {
				d.id = f.String()
			}
		case reflect.Bool:
			s := d.str(val, label)
			b, err := strconv.ParseBool(s)
			if err != nil {
				d.add(fileLine(val), CodeValue, "%s must be true or false, not %q", label, s)
			}
			f.SetBool(b)
		case reflect.Struct:
			d.object(val, f, p)
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
			d.object(val, f.Elem(), p)
		case reflect.Slice:
			if f.Type().Elem().Kind() == reflect.String {
				f.Set(reflect.ValueOf(d.list(val, label)))
				return
			}
			d.seq(val, key, func(it *yaml.Node) {
				e := reflect.New(f.Type().Elem()).Elem()
				d.object(it, e, p)
				f.Set(reflect.Append(f, e))
				if key == "citations" {
					p.CitationLines = append(p.CitationLines, fileLine(it))
				} else {
					p.EvidenceLines = append(p.EvidenceLines, fileLine(it))
				}
			})
		}
	})
}

func (d *decoder) seq(v *yaml.Node, key string, fn func(*yaml.Node)) {
	if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
		return
	}
	if v.Kind != yaml.SequenceNode {
		d.add(fileLine(v), CodeYAML, "%s must be a list of entries (\"- \" items)", key)
		return
	}
	for _, it := range v.Content {
		fn(it)
	}
}

func (d *decoder) validate(p *Parsed) {
	c := &p.Card
	line := p.Line
	require := func(key, v, hint string) bool {
		if strings.TrimSpace(v) == "" {
			d.add(line(key), CodeMissing, "%s is required: %s", key, hint)
			return false
		}
		return true
	}
	enum := func(key, v string, allowed []string) {
		if require(key, v, "one of "+strings.Join(allowed, ", ")) && !slices.Contains(allowed, v) {
			d.add(line(key), CodeValue, "%s %q is not valid: use one of %s", key, v, strings.Join(allowed, ", "))
		}
	}
	if require("id", c.ID, "the card id (kc_…), the file name without .md") && !cardIDRe.MatchString(c.ID) {
		d.add(line("id"), CodeValue, "id %q is not a card id: kc_ followed by lower-case letters and digits", c.ID)
	}
	if require("statement", c.Statement, "the card's one-line rule") {
		if n := utf8.RuneCountInString(c.Statement); n > MaxStatementChars {
			d.add(line("statement"), CodeValue, "statement is %d characters, over %d: keep the rule short and move detail to the body", n, MaxStatementChars)
		}
	}
	enum("tier", c.Tier, Tiers)
	enum("status", c.Status, Statuses)
	enum("domain", c.Domain, Domains)
	require("field", c.Field, "a field name such as general")
	enum("persistence", c.Persistence, Persistences)
	enum("render_pref", c.RenderPref, RenderPrefs)
	for _, kv := range [][2]string{{"review_after", c.ReviewAfter}, {"expires_at", c.ExpiresAt}} {
		if kv[1] != "" && !validTime(kv[1]) {
			d.add(line(kv[0]), CodeValue, "%s %q is not a date: use YYYY-MM-DD or RFC3339", kv[0], kv[1])
		}
	}
	// The limits of every other way in: editors compile patterns for hints.
	if pr := trigger.Check(c.Triggers.Patterns, c.Triggers.Intents, c.Triggers.ToolNeeds); pr != nil {
		d.add(line("triggers"), CodeValue, "triggers.%s: %s", pr.List, pr.Msg)
	}
	if c.OriginCard != "" && !cardIDRe.MatchString(c.OriginCard) {
		d.add(line("origin_card"), CodeValue, "origin_card %q is not a card id", c.OriginCard)
	}
	require("created_by", c.CreatedBy, "who created the card")
	if require("created_at", c.CreatedAt, "when the card was created (RFC3339)") && !validTime(c.CreatedAt) {
		d.add(line("created_at"), CodeValue, "created_at %q is not an RFC3339 time", c.CreatedAt)
	}
	if e := c.LastEvent; e != nil {
		l := line("last_event")
		if e.Type == "" || e.At == "" || e.Actor == "" {
			d.add(l, CodeMissing, "last_event needs type, at and actor")
		}
		if e.At != "" && !validTime(e.At) {
			d.add(l, CodeValue, "last_event.at %q is not an RFC3339 time", e.At)
		}
		if e.Reviewer.Type != "" && !slices.Contains(ActorTypes, e.Reviewer.Type) {
			d.add(l, CodeValue, "last_event.reviewer.type %q is not valid: use human or agent", e.Reviewer.Type)
		}
	}
	evidence := map[string]Evidence{}
	for i, e := range c.Evidence {
		l := p.EvidenceLines[i]
		if !evidenceIDRe.MatchString(e.ID) {
			d.add(l, CodeValue, "evidence id %q is not an evidence id: ev_ followed by lower-case letters and digits", e.ID)
			continue
		}
		if _, dup := evidence[e.ID]; dup {
			d.add(l, CodeUnknownKey, "evidence %s is listed twice: keep one entry", e.ID)
			continue
		}
		evidence[e.ID] = e
		if e.Content == "" {
			d.add(l, CodeMissing, "evidence %s has no content: the evidence travels with the card so a clone can check it", e.ID)
		}
		switch {
		case !sha256Re.MatchString(e.SHA256):
			d.add(l, CodeValue, "evidence %s sha256 %q is not a hex sha256", e.ID, e.SHA256)
		case !e.Redacted && e.Content != "" && ContentSHA256(e.Content) != e.SHA256:
			d.add(l, CodeCitation, "evidence %s: its content does not match its sha256 (evidence is never edited: record new evidence instead)", e.ID)
		}
		for _, f := range []struct {
			k, v    string
			allowed []string
		}{
			{"domain", e.Domain, Domains}, {"provenance", e.Provenance, Provenances}, {"actor_type", e.ActorType, ActorTypes},
		} {
			if !slices.Contains(f.allowed, f.v) {
				d.add(l, CodeValue, "evidence %s %s %q is not valid: use one of %s", e.ID, f.k, f.v, strings.Join(f.allowed, ", "))
			}
		}
		if e.Field == "" || e.Actor == "" {
			d.add(l, CodeMissing, "evidence %s needs field and actor", e.ID)
		}
		if !validTime(e.CreatedAt) {
			d.add(l, CodeValue, "evidence %s created_at %q is not an RFC3339 time", e.ID, e.CreatedAt)
		}
	}
	type key struct{ ev, role string }
	seen := map[key]bool{}
	for i, ci := range c.Citations {
		l := p.CitationLines[i]
		if !slices.Contains(Roles, ci.Role) {
			d.add(l, CodeValue, "citation role %q is not valid: use one of %s", ci.Role, strings.Join(Roles, ", "))
		}
		if seen[key{ci.Evidence, ci.Role}] {
			d.add(l, CodeUnknownKey, "citation of %s as %s is listed twice", ci.Evidence, ci.Role)
		}
		seen[key{ci.Evidence, ci.Role}] = true
		e, ok := evidence[ci.Evidence]
		switch {
		case ci.Evidence == "":
			d.add(l, CodeMissing, "citation has no evidence id")
		case !ok:
			d.add(l, CodeCitation, "citation names evidence %s, which is not in the file's evidence list: the evidence travels with the card", ci.Evidence)
		case ci.SHA256 != e.SHA256:
			d.add(l, CodeCitation, "citation of %s carries sha256 %s, but the evidence's is %s", ci.Evidence, short(ci.SHA256), short(e.SHA256))
		case ci.SourceRef != e.SourceRef:
			d.add(l, CodeCitation, "citation of %s carries source_ref %q, but the evidence's is %q", ci.Evidence, ci.SourceRef, e.SourceRef)
		}
	}
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

func validTime(s string) bool {
	if _, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return true
	}
	_, err := time.Parse("2006-01-02", s)
	return err == nil
}
