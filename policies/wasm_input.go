package policies

import (
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/palacehq/palace/domain"
)

// wasmInput encodes a typed input as the JSON a .wasm module reads. It is
// written by hand rather than with encoding/json for two reasons: a nil
// list must reach the module as [] (as it reaches Rego), never null, and a
// 200-card batch is encoded on every context request.
func wasmInput(p Point, in any) ([]byte, error) {
	switch x := in.(type) {
	case GateInput:
		return appendGate(make([]byte, 0, 512), x), nil
	case ScopeInput:
		return appendScope(make([]byte, 0, 256+400*len(x.Cards)), x), nil
	case LanesInput:
		return appendLanes(make([]byte, 0, 64+300*len(x.Cards)), x), nil
	case ResearchInput:
		b, err := json.Marshal(x)
		if err != nil {
			return nil, fmt.Errorf("evaluate %s: encode input: %w", p.Package(), err)
		}
		return b, nil
	case MailboxInput:
		if x.Letter == nil {
			x.Letter = map[string]any{}
		}
		b, err := json.Marshal(x)
		if err != nil {
			return nil, fmt.Errorf("evaluate %s: encode input: %w", p.Package(), err)
		}
		return b, nil
	}
	return nil, fmt.Errorf("evaluate %s: input of type %T is not a decision point input", p.Package(), in)
}

func appendRoleCounts(b []byte, c domain.RoleCounts) []byte {
	b = append(b, `{"supporting":`...)
	b = strconv.AppendInt(b, int64(c.Supporting), 10)
	b = append(b, `,"verification":`...)
	b = strconv.AppendInt(b, int64(c.Verification), 10)
	b = append(b, `,"teaching":`...)
	b = strconv.AppendInt(b, int64(c.Teaching), 10)
	b = append(b, `,"counterexample":`...)
	b = strconv.AppendInt(b, int64(c.Counterexample), 10)
	return append(b, '}')
}

func appendGate(b []byte, in GateInput) []byte {
	b = append(b, `{"action":`...)
	b = appendString(b, in.Action)
	b = append(b, `,"target":`...)
	b = appendString(b, in.Target)
	b = append(b, `,"mode":`...)
	b = appendString(b, in.Mode)
	c := in.Card
	b = append(b, `,"card":{"id":`...)
	b = appendString(b, c.ID)
	b = append(b, `,"tier":`...)
	b = appendString(b, c.Tier)
	b = append(b, `,"status":`...)
	b = appendString(b, c.Status)
	b = append(b, `,"domain":`...)
	b = appendString(b, c.Domain)
	b = append(b, `,"field":`...)
	b = appendString(b, c.Field)
	b = append(b, `,"anchor":`...)
	b = appendString(b, c.Anchor)
	b = append(b, `,"statement":`...)
	b = appendString(b, c.Statement)
	b = append(b, `,"persistence":`...)
	b = appendString(b, c.Persistence)
	b = append(b, `,"scope":`...)
	b = appendCardScope(b, c.Scope)
	b = append(b, `},"counts":`...)
	b = appendRoleCounts(b, in.Counts)
	b = append(b, `,"all_counts":`...)
	b = appendRoleCounts(b, in.AllCounts)
	b = append(b, `,"source_refs":{"supporting":`...)
	b = appendStrings(b, in.SourceRefs.Supporting)
	b = append(b, `,"verification":`...)
	b = appendStrings(b, in.SourceRefs.Verification)
	b = append(b, `,"teaching":`...)
	b = appendStrings(b, in.SourceRefs.Teaching)
	b = append(b, `,"counterexample":`...)
	b = appendStrings(b, in.SourceRefs.Counterexample)
	b = append(b, `},"newest":{"supporting":`...)
	b = appendString(b, in.Newest.Supporting)
	b = append(b, `,"verification":`...)
	b = appendString(b, in.Newest.Verification)
	b = append(b, `,"teaching":`...)
	b = appendString(b, in.Newest.Teaching)
	b = append(b, `,"counterexample":`...)
	b = appendString(b, in.Newest.Counterexample)
	b = append(b, `},"contest":{"contested":`...)
	b = strconv.AppendBool(b, in.Contest.Contested)
	b = append(b, `,"since":`...)
	b = appendString(b, in.Contest.Since)
	b = append(b, `,"kinds":`...)
	b = appendStrings(b, in.Contest.Kinds)
	b = append(b, `},"reviewer":{"name":`...)
	b = appendString(b, in.Reviewer.Name)
	b = append(b, `,"type":`...)
	b = appendString(b, in.Reviewer.Type)
	b = append(b, `},"source":{"channel":`...)
	b = appendString(b, in.Source.Channel)
	b = append(b, `,"path":`...)
	b = appendString(b, in.Source.Path)
	b = append(b, `,"commit":`...)
	b = appendString(b, in.Source.Commit)
	b = append(b, `,"upstream":`...)
	b = appendString(b, in.Source.Upstream)
	b = append(b, `,"on_default_branch":`...)
	b = strconv.AppendBool(b, in.Source.Reviewed)
	return append(b, `}}`...)
}

func appendScope(b []byte, in ScopeInput) []byte {
	x := in.Context
	b = append(b, `{"context":{"file":`...)
	b = appendString(b, x.File)
	b = append(b, `,"language":`...)
	b = appendString(b, x.Language)
	b = append(b, `,"field":`...)
	b = appendString(b, x.Field)
	b = append(b, `,"intents":`...)
	b = appendStrings(b, x.Intents)
	b = append(b, `,"tools":`...)
	b = appendStrings(b, x.Tools)
	b = append(b, `,"query":`...)
	b = appendString(b, x.Query)
	b = append(b, `,"anchors":`...)
	b = appendStrings(b, x.Anchors)
	b = append(b, `,"wake":`...)
	b = strconv.AppendBool(b, x.Wake)
	b = append(b, `},"cards":[`...)
	for i, c := range in.Cards {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = appendString(b, c.ID)
		b = append(b, `,"tier":`...)
		b = appendString(b, c.Tier)
		b = append(b, `,"status":`...)
		b = appendString(b, c.Status)
		b = append(b, `,"domain":`...)
		b = appendString(b, c.Domain)
		b = append(b, `,"field":`...)
		b = appendString(b, c.Field)
		b = append(b, `,"anchor":`...)
		b = appendString(b, c.Anchor)
		b = append(b, `,"persistence":`...)
		b = appendString(b, c.Persistence)
		b = append(b, `,"statement":`...)
		b = appendString(b, c.Statement)
		b = append(b, `,"scope":`...)
		b = appendCardScope(b, c.Scope)
		b = append(b, `,"trigger":{"patterns":`...)
		b = appendStrings(b, c.Trigger.Patterns)
		b = append(b, `,"intents":`...)
		b = appendStrings(b, c.Trigger.Intents)
		b = append(b, `,"tool_needs":`...)
		b = appendStrings(b, c.Trigger.ToolNeeds)
		b = append(b, `},"relevance":`...)
		b = appendFloat(b, c.Relevance)
		b = append(b, '}')
	}
	return append(b, `]}`...)
}

func appendLanes(b []byte, in LanesInput) []byte {
	b = append(b, `{"cards":[`...)
	for i, c := range in.Cards {
		if i > 0 {
			b = append(b, ',')
		}
		k := c.Card
		b = append(b, `{"card":{"id":`...)
		b = appendString(b, k.ID)
		b = append(b, `,"tier":`...)
		b = appendString(b, k.Tier)
		b = append(b, `,"status":`...)
		b = appendString(b, k.Status)
		b = append(b, `,"persistence":`...)
		b = appendString(b, k.Persistence)
		b = append(b, `,"render_pref":`...)
		b = appendString(b, k.RenderPref)
		b = append(b, `,"anchor":`...)
		b = appendString(b, k.Anchor)
		b = append(b, `,"field":`...)
		b = appendString(b, k.Field)
		b = append(b, `},"scope_fit":`...)
		b = strconv.AppendInt(b, int64(c.ScopeFit), 10)
		b = append(b, `,"operation_fit":`...)
		b = strconv.AppendInt(b, int64(c.OperationFit), 10)
		b = append(b, `,"relevance":`...)
		b = appendFloat(b, c.Relevance)
		b = append(b, `,"counts30d":{"applied":`...)
		b = strconv.AppendInt(b, int64(c.Counts30d.Applied), 10)
		b = append(b, `,"skipped":`...)
		b = strconv.AppendInt(b, int64(c.Counts30d.Skipped), 10)
		b = append(b, `,"trimmed":`...)
		b = strconv.AppendInt(b, int64(c.Counts30d.Trimmed), 10)
		b = append(b, `,"viewed":`...)
		b = strconv.AppendInt(b, int64(c.Counts30d.Viewed), 10)
		for _, n := range [...]struct {
			key string
			v   int
		}{{`,"used":`, c.Counts30d.Used}, {`,"accepted":`, c.Counts30d.Accepted}, {`,"rejected":`, c.Counts30d.Rejected},
			{`,"rollback":`, c.Counts30d.Rollback}, {`,"miss":`, c.Counts30d.Miss}, {`,"contradiction":`, c.Counts30d.Contradiction}} {
			b = append(b, n.key...)
			b = strconv.AppendInt(b, int64(n.v), 10)
		}
		b = append(b, `},"age_days":`...)
		b = strconv.AppendInt(b, int64(c.AgeDays), 10)
		b = append(b, '}')
	}
	b = append(b, `],"config":{`...)
	for i, s := range lanesSettings {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, s.name...)
		b = append(b, `":`...)
		b = strconv.AppendInt(b, int64(*s.field(&in.Config)), 10)
	}
	b = append(b, `},"wake":`...)
	b = strconv.AppendBool(b, in.Wake)
	return append(b, '}')
}

func appendCardScope(b []byte, s CardScope) []byte {
	b = append(b, `{"paths":`...)
	b = appendStrings(b, s.Paths)
	b = append(b, `,"languages":`...)
	b = appendStrings(b, s.Languages)
	b = append(b, `,"fields":`...)
	b = appendStrings(b, s.Fields)
	return append(b, '}')
}

// appendStrings writes a list; nil is [] so a module never meets null.
func appendStrings(b []byte, xs []string) []byte {
	b = append(b, '[')
	for i, x := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, x)
	}
	return append(b, ']')
}

// appendFloat writes f as encoding/json does; NaN and infinities, which
// JSON cannot carry, become 0.
func appendFloat(b []byte, f float64) []byte {
	if f != f || f > 1e308 || f < -1e308 {
		return append(b, '0')
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string: quotes, backslashes and control
// characters escaped, invalid UTF-8 replaced by U+FFFD, as encoding/json
// does.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
