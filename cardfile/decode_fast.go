package cardfile

import (
	"bytes"
	"strings"
)

// decodeFast reads, without the YAML parser, front matter exactly as
// encodeFast writes it, filling p as the YAML path does; anything else
// reports false. Its reading is checked, not trusted: the card must encode
// back to fm byte for byte, so it is the card the YAML path would read.
func decodeFast(fm []byte) (Parsed, bool) {
	var p Parsed
	if len(fm) == 0 || fm[len(fm)-1] != '\n' {
		return p, false
	}
	r := fastReader{lines: strings.Split(string(fm[:len(fm)-1]), "\n")}
	c := &p.Card
	lines := map[string]int{}
	top := func(key string, dst *string) {
		if v, line, ok := r.kv("", key); ok {
			*dst, lines[key] = v, line
		} else {
			r.failed = true
		}
	}
	opt := func(key string, dst *string) {
		if r.has("", key) {
			top(key, dst)
		}
	}
	top("id", &c.ID)
	top("statement", &c.Statement)
	top("tier", &c.Tier)
	top("status", &c.Status)
	top("domain", &c.Domain)
	top("field", &c.Field)
	lines["scope"] = r.head("", "scope")
	c.Scope.Paths = r.list("  ", "paths")
	c.Scope.Languages = r.list("  ", "languages")
	c.Scope.Fields = r.list("  ", "fields")
	lines["triggers"] = r.head("", "triggers")
	c.Triggers.Patterns = r.list("  ", "patterns")
	c.Triggers.Intents = r.list("  ", "intents")
	c.Triggers.ToolNeeds = r.list("  ", "tool_needs")
	top("persistence", &c.Persistence)
	top("render_pref", &c.RenderPref)
	opt("review_after", &c.ReviewAfter)
	opt("expires_at", &c.ExpiresAt)
	opt("origin_card", &c.OriginCard)
	top("created_by", &c.CreatedBy)
	top("created_at", &c.CreatedAt)
	if r.has("", "last_event") {
		lines["last_event"] = r.head("", "last_event")
		e := &Event{}
		e.Type = r.val("  ", "type")
		e.At = r.val("  ", "at")
		e.Actor = r.val("  ", "actor")
		r.head("  ", "reviewer")
		e.Reviewer.Name = r.val("    ", "name")
		e.Reviewer.Type = r.val("    ", "type")
		if r.has("  ", "policy_hash") {
			e.PolicyHash = r.val("  ", "policy_hash")
		}
		c.LastEvent = e
	}
	var cites, evs []int
	if line, ok := r.emptyList("", "citations"); ok {
		lines["citations"] = line
	} else {
		lines["citations"] = r.head("", "citations")
		for !r.failed && r.has("  - ", "evidence") {
			var ci Citation
			cites = append(cites, r.i+2)
			ci.Evidence = r.val("  - ", "evidence")
			ci.Role = r.val("    ", "role")
			ci.SourceRef = r.val("    ", "source_ref")
			ci.SHA256 = r.val("    ", "sha256")
			if r.has("    ", "note") {
				ci.Note = r.val("    ", "note")
			}
			c.Citations = append(c.Citations, ci)
		}
	}
	if line, ok := r.emptyList("", "evidence"); ok {
		lines["evidence"] = line
	} else {
		lines["evidence"] = r.head("", "evidence")
		for !r.failed && r.has("  - ", "id") {
			var e Evidence
			evs = append(evs, r.i+2)
			e.ID = r.val("  - ", "id")
			e.SHA256 = r.val("    ", "sha256")
			e.Domain = r.val("    ", "domain")
			e.Field = r.val("    ", "field")
			e.Provenance = r.val("    ", "provenance")
			e.SourceRef = r.val("    ", "source_ref")
			e.Tags = r.list("    ", "tags")
			e.Actor = r.val("    ", "actor")
			e.ActorType = r.val("    ", "actor_type")
			e.CreatedAt = r.val("    ", "created_at")
			if r.i < len(r.lines) && r.lines[r.i] == "    redacted: true" {
				e.Redacted = true
				r.i++
			}
			e.Content = r.val("    ", "content")
			c.Evidence = append(c.Evidence, e)
		}
	}
	opt("content", &c.Content)
	if r.failed || r.i != len(r.lines) {
		return Parsed{}, false
	}
	if back, ok := encodeFast(make([]byte, 0, len(fm)), c); !ok || !bytes.Equal(back, fm) {
		return Parsed{}, false
	}
	p.Lines, p.CitationLines, p.EvidenceLines = lines, cites, evs
	return p, true
}

// fastReader walks the lines of a front matter; any unexpected line sets failed.
type fastReader struct {
	lines  []string
	i      int
	failed bool
}

// has reports whether the next line is indent+key+":".
func (r *fastReader) has(indent, key string) bool {
	if r.failed || r.i >= len(r.lines) {
		return false
	}
	l := r.lines[r.i]
	return len(l) > len(indent)+len(key) && strings.HasPrefix(l, indent) && l[len(indent):len(indent)+len(key)] == key &&
		l[len(indent)+len(key)] == ':'
}

// head reads the line indent+key+":" opening a block and returns its file line.
func (r *fastReader) head(indent, key string) int {
	if r.failed || r.i >= len(r.lines) || r.lines[r.i] != indent+key+":" {
		r.failed = true
		return 0
	}
	r.i++
	return r.i + 1
}

// kv reads "indent key: scalar".
func (r *fastReader) kv(indent, key string) (string, int, bool) {
	if !r.has(indent, key) {
		return "", 0, false
	}
	l := r.lines[r.i]
	rest := l[len(indent)+len(key)+1:]
	if !strings.HasPrefix(rest, " ") {
		return "", 0, false
	}
	v, n, ok := readScalar(rest[1:], false)
	if !ok || n != len(rest)-1 {
		return "", 0, false
	}
	r.i++
	return v, r.i + 1, true
}

// val is kv for a required key, setting failed when it is not there.
func (r *fastReader) val(indent, key string) string {
	v, _, ok := r.kv(indent, key)
	if !ok {
		r.failed = true
	}
	return v
}

// emptyList reads "key: []".
func (r *fastReader) emptyList(indent, key string) (int, bool) {
	if r.failed || r.i >= len(r.lines) || r.lines[r.i] != indent+key+": []" {
		return 0, false
	}
	r.i++
	return r.i + 1, true
}

// list reads "indent key: [a, b]" as a non-nil list; an empty item fails.
func (r *fastReader) list(indent, key string) []string {
	if !r.has(indent, key) {
		r.failed = true
		return nil
	}
	rest := r.lines[r.i][len(indent)+len(key)+1:]
	if !strings.HasPrefix(rest, " [") || !strings.HasSuffix(rest, "]") {
		r.failed = true
		return nil
	}
	in := rest[2 : len(rest)-1]
	out := []string{}
	for len(in) > 0 {
		v, n, ok := readScalar(in, true)
		if !ok || v == "" {
			r.failed = true
			return nil
		}
		out = append(out, v)
		in = in[n:]
		if len(in) > 0 {
			if !strings.HasPrefix(in, ", ") {
				r.failed = true
				return nil
			}
			in = in[2:]
		}
	}
	r.i++
	return out
}

// readScalar reads one scalar, quoted as encodeFast quotes or plain (to the
// end, or in a flow list to ", "), returning it and the bytes read.
func readScalar(s string, flow bool) (string, int, bool) {
	if s == "" {
		return "", 0, false
	}
	switch s[0] {
	case '"':
		var b strings.Builder
		for i := 1; i < len(s); i++ {
			switch s[i] {
			case '"':
				return b.String(), i + 1, true
			case '\\':
				if i+1 >= len(s) || (s[i+1] != '"' && s[i+1] != '\\') {
					return "", 0, false
				}
				i++
			}
			b.WriteByte(s[i])
		}
		return "", 0, false
	case '\'':
		var b strings.Builder
		for i := 1; i < len(s); i++ {
			if s[i] == '\'' {
				if i+1 < len(s) && s[i+1] == '\'' {
					b.WriteByte('\'')
					i++
					continue
				}
				return b.String(), i + 1, true
			}
			b.WriteByte(s[i])
		}
		return "", 0, false
	}
	if flow {
		if i := strings.Index(s, ", "); i >= 0 {
			return s[:i], i, true
		}
	}
	return s, len(s), true
}
