package cardfile

import (
	"strconv"
	"strings"
	"time"
)

// encodeFast writes a normalized card's front matter byte for byte as the
// YAML encoder does, without reflection. It handles single-line printable
// ASCII scalars, in the style the encoder would pick, and reports false on
// anything else, which the caller gives the YAML encoder. A test compares
// the two on generated cards.
func encodeFast(buf []byte, c *Card) ([]byte, bool) {
	e := fastEnc{b: buf}
	e.kv("", "id", c.ID)
	e.kv("", "statement", c.Statement)
	e.kv("", "tier", c.Tier)
	e.kv("", "status", c.Status)
	e.kv("", "domain", c.Domain)
	e.kv("", "field", c.Field)
	e.key("", "scope")
	e.b = append(e.b, '\n')
	e.list("  ", "paths", c.Scope.Paths)
	e.list("  ", "languages", c.Scope.Languages)
	e.list("  ", "fields", c.Scope.Fields)
	e.key("", "triggers")
	e.b = append(e.b, '\n')
	e.list("  ", "patterns", c.Triggers.Patterns)
	e.list("  ", "intents", c.Triggers.Intents)
	e.list("  ", "tool_needs", c.Triggers.ToolNeeds)
	e.kv("", "persistence", c.Persistence)
	e.kv("", "render_pref", c.RenderPref)
	e.opt("", "review_after", c.ReviewAfter)
	e.opt("", "expires_at", c.ExpiresAt)
	e.opt("", "origin_card", c.OriginCard)
	e.kv("", "created_by", c.CreatedBy)
	e.kv("", "created_at", c.CreatedAt)
	if ev := c.LastEvent; ev != nil {
		e.key("", "last_event")
		e.b = append(e.b, '\n')
		e.kv("  ", "type", ev.Type)
		e.kv("  ", "at", ev.At)
		e.kv("  ", "actor", ev.Actor)
		e.key("  ", "reviewer")
		e.b = append(e.b, '\n')
		e.kv("    ", "name", ev.Reviewer.Name)
		e.kv("    ", "type", ev.Reviewer.Type)
		e.opt("  ", "policy_hash", ev.PolicyHash)
	}
	e.key("", "citations")
	if len(c.Citations) == 0 {
		e.b = append(e.b, " []\n"...)
	} else {
		e.b = append(e.b, '\n')
	}
	for _, ci := range c.Citations {
		e.kv("  - ", "evidence", ci.Evidence)
		e.kv("    ", "role", ci.Role)
		e.kv("    ", "source_ref", ci.SourceRef)
		e.kv("    ", "sha256", ci.SHA256)
		e.opt("    ", "note", ci.Note)
	}
	e.key("", "evidence")
	if len(c.Evidence) == 0 {
		e.b = append(e.b, " []\n"...)
	} else {
		e.b = append(e.b, '\n')
	}
	for _, ev := range c.Evidence {
		e.kv("  - ", "id", ev.ID)
		e.kv("    ", "sha256", ev.SHA256)
		e.kv("    ", "domain", ev.Domain)
		e.kv("    ", "field", ev.Field)
		e.kv("    ", "provenance", ev.Provenance)
		e.kv("    ", "source_ref", ev.SourceRef)
		e.list("    ", "tags", ev.Tags)
		e.kv("    ", "actor", ev.Actor)
		e.kv("    ", "actor_type", ev.ActorType)
		e.kv("    ", "created_at", ev.CreatedAt)
		if ev.Redacted {
			e.b = append(e.b, "    redacted: true\n"...)
		}
		e.kv("    ", "content", ev.Content)
	}
	e.opt("", "content", c.Content)
	return e.b, !e.failed
}

type fastEnc struct {
	b      []byte
	failed bool // by the first scalar the fast path does not handle
}

func (e *fastEnc) key(indent, k string) {
	e.b = append(e.b, indent...)
	e.b = append(e.b, k...)
	e.b = append(e.b, ':')
}

// kv writes "k: v".
func (e *fastEnc) kv(indent, k, v string) {
	e.key(indent, k)
	e.b = append(e.b, ' ')
	e.scalar(v, false)
	e.b = append(e.b, '\n')
}

// opt writes "k: v" unless v is empty (omitempty).
func (e *fastEnc) opt(indent, k, v string) {
	if v != "" {
		e.kv(indent, k, v)
	}
}

// list writes "k: [a, b]".
func (e *fastEnc) list(indent, k string, vs []string) {
	e.key(indent, k)
	e.b = append(e.b, " ["...)
	for i, v := range vs {
		if i > 0 {
			e.b = append(e.b, ", "...)
		}
		e.scalar(v, true)
	}
	e.b = append(e.b, "]\n"...)
}

// scalar writes s in the style the YAML encoder picks in a block mapping or
// a flow sequence, or sets failed.
func (e *fastEnc) scalar(s string, flow bool) {
	if e.failed {
		return
	}
	if s == "" {
		e.b = append(e.b, `""`...)
		return
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e {
			e.failed = true
			return
		}
	}
	plain, known := plainResolvesString(s)
	if !known {
		e.failed = true
		return
	}
	if !plain {
		e.b = append(e.b, '"')
		for i := 0; i < len(s); i++ {
			if c := s[i]; c == '"' || c == '\\' {
				e.b = append(e.b, '\\')
			}
			e.b = append(e.b, s[i])
		}
		e.b = append(e.b, '"')
		return
	}
	if plainAllowed(s, flow) {
		e.b = append(e.b, s...)
		return
	}
	e.b = append(e.b, '\'')
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' {
			e.b = append(e.b, '\'')
		}
		e.b = append(e.b, s[i])
	}
	e.b = append(e.b, '\'')
}

// plainResolvesString reports whether s, written plain, reads back as a
// string (else the encoder double-quotes it); known is false when unsure.
func plainResolvesString(s string) (plain, known bool) {
	switch c := s[0]; {
	case c == '+' || c == '-' || c >= '0' && c <= '9':
		if isTimestamp(s) {
			return false, true
		}
		if isHexDigest(s) {
			return true, true
		}
		return false, false
	case c == '.':
		if resolveWords[s] {
			return false, true
		}
		_, err := strconv.ParseFloat(s, 64)
		return err != nil, true
	}
	return !resolveWords[s], true
}

// resolveWords are the plain words YAML reads as something other than a string.
var resolveWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`true True TRUE false False FALSE ~ null Null NULL .nan .NaN .NAN .inf .Inf .INF
		+.inf +.Inf +.INF -.inf -.Inf -.INF << y Y yes Yes YES on On ON n N no No NO off Off OFF`) {
		resolveWords[w] = true
	}
}

// isTimestamp reports whether s is a valid date or a time as palace writes
// them, which YAML reads as a timestamp.
func isTimestamp(s string) bool {
	digits := func(s string) bool {
		for i := 0; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				return false
			}
		}
		return true
	}
	switch {
	case len(s) == 10 && digits(s[:4]) && s[4] == '-' && digits(s[5:7]) && s[7] == '-' && digits(s[8:]):
		_, err := time.Parse("2006-1-2", s)
		return err == nil
	case len(s) == 24 && digits(s[:4]) && s[4] == '-' && digits(s[5:7]) && s[7] == '-' && digits(s[8:10]) &&
		s[10] == 'T' && digits(s[11:13]) && s[13] == ':' && digits(s[14:16]) && s[16] == ':' && digits(s[17:19]) &&
		s[19] == '.' && digits(s[20:23]) && s[23] == 'Z':
		_, err := time.Parse("2006-1-2T15:4:5.999999999Z07:00", s)
		return err == nil
	}
	return false
}

// isHexDigest reports whether s is a 64-digit lowercase hex digest no number
// syntax can read (a letter other than e, no base prefix).
func isHexDigest(s string) bool {
	if len(s) != 64 || s[0] == '0' && (s[1] == 'b' || s[1] == 'o' || s[1] == 'x') {
		return false
	}
	letter := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9', c == 'e':
		case c >= 'a' && c <= 'f':
			letter = true
		default:
			return false
		}
	}
	return letter
}

// plainAllowed applies the encoder's analysis of a printable ASCII scalar:
// no edge space, no indicator that reads differently in its context.
func plainAllowed(s string, flow bool) bool {
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	if len(s) >= 3 && (s[:3] == "---" || s[:3] == "...") {
		return false
	}
	flowInd, blockInd := false, false
	preceded := true
	for i := 0; i < len(s); i++ {
		followed := i+1 >= len(s) || s[i+1] == ' '
		c := s[i]
		if i == 0 {
			switch c {
			case '#', ',', '[', ']', '{', '}', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
				flowInd, blockInd = true, true
			case '?', ':':
				flowInd = true
				if followed {
					blockInd = true
				}
			case '-':
				if followed {
					flowInd, blockInd = true, true
				}
			}
		} else {
			switch c {
			case ',', '?', '[', ']', '{', '}':
				flowInd = true
			case ':':
				flowInd = true
				if followed {
					blockInd = true
				}
			case '#':
				if preceded {
					flowInd, blockInd = true, true
				}
			}
		}
		preceded = c == ' '
	}
	if flow {
		return !flowInd
	}
	return !blockInd
}
