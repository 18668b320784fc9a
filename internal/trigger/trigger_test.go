package trigger_test

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"testing"

	"github.com/palacehq/palace/internal/trigger"
)

func many(n int, f func(i int) string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

func TestCheck(t *testing.T) {
	ok := []string{`sql\.Open\(`, `(?i)drop\s+table`, `\bfooBar\b`}
	for _, c := range []struct {
		name                         string
		patterns, intents, toolNeeds []string
		list                         string
		index                        int
		want                         string // in the message; "" means no problem
	}{
		{"honest triggers", ok, []string{"migrate"}, []string{"sqlite"}, "", 0, ""},
		{"at the limits", many(trigger.MaxPatterns, func(i int) string { return fmt.Sprintf("name%d", i) }), many(trigger.MaxTags, func(i int) string { return "t" }), nil, "", 0, ""},
		{"a repeat at the program limit", []string{`[a-z]{1000}`}, nil, nil, "", 0, ""},
		{"40k patterns", many(40000, func(i int) string { return fmt.Sprintf("p%d", i) }), nil, nil,
			trigger.ListPatterns, -1, "40000 trigger patterns, over the limit of 32 per card"},
		{"one pattern too long", []string{"ok", strings.Repeat("x", trigger.MaxPatternBytes+1)}, nil, nil,
			trigger.ListPatterns, 1, "trigger pattern 2 is 513 bytes, over the limit of 512 bytes"},
		{"too many bytes together", many(10, func(int) string { return strings.Repeat("y", 500) }), nil, nil,
			trigger.ListPatterns, -1, "the trigger patterns are 5000 bytes together, over the limit of 4096 bytes per card"},
		{"a pattern that compiles too big", []string{"ok", `(a|b|c){1000}`}, nil, nil,
			trigger.ListPatterns, 1, `trigger pattern "(a|b|c){1000}" compiles to more than 1000 instructions (about 3000)`},
		{"nested repeats", []string{`(\w{20}x{20}){30}`}, nil, nil,
			trigger.ListPatterns, 0, "compiles to more than 1000 instructions"},
		{"not a regular expression", []string{"a("}, nil, nil,
			trigger.ListPatterns, 0, `trigger pattern "a(" is not a valid regular expression: error parsing regexp: missing closing )`},
		{"programs too big together", many(5, func(i int) string { return fmt.Sprintf("[a-z]{%d}", 990+i) }), nil, nil,
			trigger.ListPatterns, -1, "compile to 4960 instructions together, over the limit of 4000 per card"},
		{"too many intents", nil, many(33, func(int) string { return "i" }), nil,
			trigger.ListIntents, -1, "33 intents, over the limit of 32 per card"},
		{"a tool need too long", nil, nil, []string{strings.Repeat("z", 129)},
			trigger.ListToolNeeds, 0, "tool need 1 is 129 bytes, over the limit of 128 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := trigger.Check(c.patterns, c.intents, c.toolNeeds)
			if c.want == "" {
				if p != nil {
					t.Fatalf("got %q, want no problem", p.Msg)
				}
				return
			}
			if p == nil {
				t.Fatalf("no problem, want %q", c.want)
			}
			if p.List != c.list || p.Index != c.index || !strings.Contains(p.Msg, c.want) {
				t.Fatalf("got %s[%d] %q, want %s[%d] containing %q", p.List, p.Index, p.Msg, c.list, c.index, c.want)
			}
		})
	}
}

// TestProgramSizeBoundsTheCompiledProgram holds the count Compile refuses
// by to the program Go's regexp really builds: never below it, so a pattern
// under the limit cannot compile to more.
func TestProgramSizeBoundsTheCompiledProgram(t *testing.T) {
	for _, src := range []string{
		`foo`, `\bfooBar\(`, `[a-z]{100}`, `[a-z]{1000}`, `\pL{100}`, `(a|b|c){300}`, `x{10,499}`, `((a{10}){10}){5}`,
		`.{999}`, `(?i)drop\s+table`, `(?:a+b*c?){50}`, `(foo|bar|baz)+`, `^\s*func\s+\w+\(`, `a{0,499}`, `(?i)\pL{10}`,
	} {
		re, size, err := trigger.Compile(src)
		if err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		parsed, _ := syntax.Parse(src, syntax.Perl)
		prog, err := syntax.Compile(parsed.Simplify())
		if err != nil {
			t.Fatal(err)
		}
		if real := len(prog.Inst); real > size+4 {
			t.Errorf("%s: counted %d, compiled %d instructions", src, size, real)
		}
		if re.String() != regexp.MustCompile(src).String() {
			t.Errorf("%s: compiled differently", src)
		}
	}
}
