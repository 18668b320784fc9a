package limits

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/internal/bounded"
	"github.com/palacehq/palace/internal/hosterr"
	"github.com/palacehq/palace/internal/trigger"
)

// Text refuses a value that is not valid UTF-8, holds a NUL byte (SQLite
// and every terminal stop reading text at it), or is longer than limit bytes
// (0: no limit). field names the input in the message, fix says what to do.
func Text(field, value string, limit int, fix string) error {
	switch {
	case !utf8.ValidString(value):
		return hosterr.Invalid(field, "%s is not valid UTF-8: %s", field, fix)
	case strings.IndexByte(value, 0) >= 0:
		return hosterr.Invalid(field, "%s holds a NUL byte (at byte %d): palace stores text; %s", field, strings.IndexByte(value, 0), fix)
	case limit > 0 && len(value) > limit:
		return hosterr.Invalid(field, "%s is %d bytes, over the limit of %s: %s", field, len(value), bounded.Human(int64(limit)), fix)
	}
	return nil
}

// Evidence is the part of a piece of evidence the per-field limits apply
// to, however it came in (record, a JSON Lines import, a card file).
type Evidence struct {
	Content, Field, Domain, SourceRef, Anchor, Provenance string
	Tags                                                  []string
}

// CheckEvidence applies the per-field limits to one piece of evidence
// (content's own size and emptiness checks stay with the other content
// rules).
func CheckEvidence(e Evidence) error {
	if i := strings.IndexByte(e.Content, 0); i >= 0 {
		return hosterr.Invalid("content", "content holds a NUL byte (at byte %d): palace stores text; base64-encode binary data", i)
	}
	for _, c := range []struct {
		field, value string
		limit        int
		fix          string
	}{
		{"field", e.Field, FieldBytes, "use a short name such as go or release-process"},
		{"domain", e.Domain, DomainBytes, "use one of " + strings.Join(domain.Strings(domain.Domains), ", ")},
		{"source_ref", e.SourceRef, SourceRefBytes, "point at the source (file:line, URL, command), do not paste it"},
		{"anchor", e.Anchor, FieldBytes, "use worktree, repo or global"},
		{"provenance", e.Provenance, FieldBytes, "use one of " + strings.Join(domain.Strings(domain.Provenances), ", ")},
	} {
		if err := Text(c.field, c.value, c.limit, c.fix); err != nil {
			return err
		}
	}
	return checkTags(e.Tags)
}

func checkTags(tags []string) error {
	if len(tags) > Tags {
		return hosterr.Invalid("tags", "%d tags, over the limit of %d: keep the tags that help find the evidence", len(tags), Tags)
	}
	for i, t := range tags {
		if err := Text(fmt.Sprintf("tag %d", i+1), t, TagBytes, "a tag is a short label"); err != nil {
			var he *hosterr.Error
			if errors.As(err, &he) {
				he.Field = "tags" // the argument, while the message names the tag
			}
			return err
		}
	}
	return nil
}

// Scope refuses a path glob that can never match (an unclosed [ or {), so
// a card is not stored with a scope that silently applies nowhere.
func Scope(sc domain.Scope) error {
	for _, p := range sc.Paths {
		if err := Text("scope_path", p, SourceRefBytes, "use a path glob such as internal/** or *.go"); err != nil {
			return err
		}
		if !doublestar.ValidatePattern(p) {
			return hosterr.Invalid("scope_path", "scope path %q is not a valid glob (an unclosed [ or {, or a trailing \\): close it, or escape a literal [ as \\[", p)
		}
	}
	for _, l := range [][]string{sc.Languages, sc.Fields} {
		for _, v := range l {
			if err := Text("scope", v, FieldBytes, "use a language id or a field name"); err != nil {
				return err
			}
		}
	}
	return nil
}

// triggerFlags names the flag of each trigger list, as the CLI spells it
// (MCP rewords a flag into its argument).
var triggerFlags = map[string]struct{ flag, field string }{
	trigger.ListPatterns:  {"--trigger-pattern", "trigger_pattern"},
	trigger.ListIntents:   {"--intent", "intent"},
	trigger.ListToolNeeds: {"--tool-need", "tool_need"},
}

// Triggers refuses a card's triggers over the limits of package trigger
// (counts, bytes, compiled size) or a pattern that does not compile: bad
// input naming the flag, the limit and what to do.
func Triggers(t domain.Trigger) error {
	p := trigger.Check(t.Patterns, t.Intents, t.ToolNeeds)
	if p == nil {
		return nil
	}
	f := triggerFlags[p.List]
	return hosterr.Invalid(f.field, "%s: %s", f.flag, p.Msg)
}
