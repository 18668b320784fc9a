package rulefiles_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/palacehq/palace/rulefiles"
)

// TestUnclosedFenceInContent: a card whose content opens a code fence and
// never closes it is rendered with the fence closed, so the block still
// ends where it should and merges again unchanged.
func TestUnclosedFenceInContent(t *testing.T) {
	c := rulefiles.Card{ID: "kc_f", Statement: "Show the command.", Content: "Run:\n```sh\nmake test", Tier: "qi", Status: "canonical", Field: "general", RenderPref: "inline_full"}
	f := rulefiles.Render(rulefiles.AgentsMD, []rulefiles.Card{c}, rulefiles.Options{})[0]
	merged, err := rulefiles.Merge("AGENTS.md", []byte("# T\n"), f.Content)
	if err != nil {
		t.Fatal(err)
	}
	again, err := rulefiles.Merge("AGENTS.md", merged, f.Content)
	if err != nil || string(again) != string(merged) {
		t.Fatalf("second merge: %v\n%s", err, again)
	}
	doc, err := rulefiles.Parse("AGENTS.md", merged, rulefiles.ParseOptions{IncludeGenerated: true})
	if err != nil || len(doc.Rules) != 1 || doc.Rules[0].Content != "Run:\n```sh\nmake test\n```" {
		t.Fatalf("parse: %v %+v", err, doc.Rules)
	}
}

// TestRoundTrip: every rendered card reads back with its statement, content
// (in full form), tier, field and scope; reference lines read back as none.
func TestRoundTrip(t *testing.T) {
	cards := map[string]rulefiles.Card{}
	for _, c := range sampleCards() {
		cards[c.ID] = c
	}
	for _, target := range rulefiles.Targets {
		seen := map[string]bool{}
		for _, f := range rulefiles.Render(target, sampleCards(), rulefiles.Options{}) {
			doc, err := rulefiles.Parse(f.Path, []byte(f.Content), rulefiles.ParseOptions{IncludeGenerated: true})
			if err != nil {
				t.Fatalf("%s %s: %v", target, f.Path, err)
			}
			forms := map[string]rulefiles.Form{}
			for _, p := range f.Cards {
				forms[p.ID] = p.Form
			}
			for _, r := range doc.Rules {
				c, ok := cards[r.CardID]
				if !ok {
					t.Fatalf("%s %s: rule cites unknown card %q", target, f.Path, r.CardID)
				}
				seen[c.ID] = true
				if r.Statement != c.Statement || r.Tier != c.Tier || r.Field != c.Field || !r.Generated {
					t.Errorf("%s %s: read %q %s %s, want %q %s %s", target, f.Path, r.Statement, r.Tier, r.Field, c.Statement, c.Tier, c.Field)
				}
				if !sameStrings(r.Paths, c.Paths) || !sameStrings(r.Languages, c.Languages) || !sameStrings(r.Fields, c.Fields) {
					t.Errorf("%s %s: %s scope %v %v %v, want %v %v %v", target, f.Path, c.ID, r.Paths, r.Languages, r.Fields, c.Paths, c.Languages, c.Fields)
				}
				if forms[c.ID] == rulefiles.FormFull && r.Content != c.Content {
					t.Errorf("%s %s: %s content %q, want %q", target, f.Path, c.ID, r.Content, c.Content)
				}
			}
			refs := 0
			for _, p := range f.Cards {
				if p.Form == rulefiles.FormRef {
					refs++
				}
			}
			if doc.Refs != refs {
				t.Errorf("%s %s: %d reference lines read, %d rendered", target, f.Path, doc.Refs, refs)
			}
			// Without IncludeGenerated the block is recognised and skipped.
			skipped, err := rulefiles.Parse(f.Path, []byte(f.Content), rulefiles.ParseOptions{})
			if err != nil || len(skipped.Rules) != 0 || len(skipped.Generated) != 1 {
				t.Errorf("%s %s: without IncludeGenerated got %d rules, %d blocks, %v", target, f.Path, len(skipped.Rules), len(skipped.Generated), err)
			}
		}
		for id, c := range cards {
			if !seen[id] && c.RenderPref != "ref_preferred" {
				t.Errorf("%s: card %s did not come back", target, id)
			}
		}
	}
}

func sameStrings(a, b []string) bool {
	return len(a) == 0 && len(b) == 0 || reflect.DeepEqual(a, b)
}

func TestParseHandWritten(t *testing.T) {
	type rule struct {
		line      int
		statement string
		content   string
		paths     []string
	}
	cases := []struct {
		name, file, text string
		want             []rule
		scope            []string
	}{
		{
			name: "agents list with continuation, nested item and code", file: "AGENTS.md",
			text: "# Project\n\nIntro paragraph is not a rule.\n\n## Rules\n\n- Use gofmt.\n- Run tests:\n  - unit: `go test ./...`\n  - e2e: `make demo`\n* Keep PRs small.\n\n1. Numbered rule\n   continues here.\n",
			want: []rule{
				{7, "Use gofmt.", "", nil},
				{8, "Run tests:", "Run tests:\n- unit: `go test ./...`\n- e2e: `make demo`", nil},
				{11, "Keep PRs small.", "", nil},
				{13, "Numbered rule continues here.", "Numbered rule\ncontinues here.", nil},
			},
		},
		{
			// A sentence wrapped over lines is one statement, however the
			// line breaks fall; the rest of the rule stays in its content.
			name: "a rule wrapped mid-sentence keeps its whole first sentence", file: "AGENTS.md",
			text: "- Always run the migrations before\n  starting the server. Then check\n  the logs.\n- Never push to main\n  directly\n\n  - or force-push\n",
			want: []rule{
				{1, "Always run the migrations before starting the server.", "Always run the migrations before\nstarting the server. Then check\nthe logs.", nil},
				{4, "Never push to main directly", "Never push to main\ndirectly\n\n- or force-push", nil},
			},
		},
		{
			name: "nested AGENTS.md scopes its directory", file: "services/api/AGENTS.md",
			text: "- Return errors, never panic.\n", scope: []string{"services/api/**"},
			want: []rule{{1, "Return errors, never panic.", "", []string{"services/api/**"}}},
		},
		{
			name: "cursor mdc with unquoted globs and prose", file: ".cursor/rules/ts.mdc",
			text:  "---\ndescription: TypeScript rules\nglobs: src/**/*.ts, src/**/*.tsx\nalwaysApply: false\n---\n# TS\n\nUse strict mode everywhere.\n\nNo default exports;\nname every export.\n",
			scope: []string{"src/**/*.ts", "src/**/*.tsx"},
			want: []rule{
				{8, "Use strict mode everywhere.", "", []string{"src/**/*.ts", "src/**/*.tsx"}},
				{10, "No default exports; name every export.", "", []string{"src/**/*.ts", "src/**/*.tsx"}},
			},
		},
		{
			name: "cursor alwaysApply means everywhere", file: "x.mdc",
			text: "---\nglobs: \"*.go\"\nalwaysApply: true\n---\n- Rule.\n",
			want: []rule{{5, "Rule.", "", nil}},
		},
		{
			name: "cursor globs as a YAML list", file: "x.mdc",
			text: "---\nglobs:\n  - \"store/**\"\n  - 'api/**'\n---\n- Rule.\n", scope: []string{"store/**", "api/**"},
			want: []rule{{6, "Rule.", "", []string{"store/**", "api/**"}}},
		},
		{
			name: "copilot applyTo list", file: ".github/instructions/go.instructions.md",
			text: "---\napplyTo: \"**/*.go,**/go.mod\"\n---\n- Wrap errors with %w.\n", scope: []string{"**/*.go", "**/go.mod"},
			want: []rule{{4, "Wrap errors with %w.", "", []string{"**/*.go", "**/go.mod"}}},
		},
		{
			name: "copilot applyTo ** means everywhere", file: "a.instructions.md",
			text: "---\napplyTo: '**'\n---\n- Rule.\n",
			want: []rule{{4, "Rule.", "", nil}},
		},
		{
			name: "fenced code is never a rule", file: "notes.md",
			text: "```\n- not a rule\n<!-- palace:begin agents-md -->\n```\n- A rule.\n",
			want: []rule{{5, "A rule.", "", nil}},
		},
		{
			name: "generated block skipped, hand-written kept", file: "CLAUDE.md",
			text: "- Before.\n\n<!-- palace:begin claude-md -->\n- Governed. (`kc_1` · shu · promoted)\n<!-- palace:end -->\n\n- After.\n",
			want: []rule{{1, "Before.", "", nil}, {7, "After.", "", nil}},
		},
		{
			name: "long first line: first sentence is the statement", file: "AGENTS.md",
			text: "- Keep it short. " + strings.Repeat("word ", 70) + "\n",
			want: []rule{{1, "Keep it short.", "Keep it short. " + strings.TrimSpace(strings.Repeat("word ", 70)), nil}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc, err := rulefiles.Parse(c.file, []byte(c.text), rulefiles.ParseOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(doc.Paths, c.scope) {
				t.Errorf("scope %q, want %q", doc.Paths, c.scope)
			}
			var got []rule
			for _, r := range doc.Rules {
				got = append(got, rule{r.Line, r.Statement, r.Content, r.Paths})
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("rules\n got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestParseBadInput(t *testing.T) {
	cases := []struct {
		name, file, text, want string
	}{
		{"binary", "AGENTS.md", "- ok\n\x00\x01\x02", "AGENTS.md:2: binary data (a NUL byte): import text files only"},
		{"not utf-8", "AGENTS.md", "- ok\n- caf\xe9\n", "AGENTS.md:2: not valid UTF-8: save the file as UTF-8 text"},
		{"conflict", "AGENTS.md", "- a\n<<<<<<< HEAD\n- b\n=======\n- c\n>>>>>>> main\n", "AGENTS.md:2: merge conflict marker: resolve the conflict, then import again"},
		{"unclosed front matter", "r.mdc", "---\nglobs: a/**\ndescription: x\n", "r.mdc:1: front matter opened with --- is not closed: add a --- line after it"},
		{"bad front matter line", "r.mdc", "---\nthis is not yaml\n---\n- rule\n", "r.mdc:2: front matter line \"this is not yaml\" is not `key: value`: fix it, or close the front matter with ---"},
		{"bad glob", "r.instructions.md", "---\napplyTo: \"src/[abc\"\n---\n- rule\n", "r.instructions.md:2: applyTo pattern \"src/[abc\" is not a valid glob (an unclosed [ or {): fix the pattern"},
		{"unclosed flow list", "r.mdc", "---\nglobs: [a/**, b/**\n---\n", "r.mdc:2: globs: a [ list must close on the same line with ]"},
		{"begin without end", "AGENTS.md", "- a\n<!-- palace:begin agents-md -->\n- b\n", "AGENTS.md:2: palace:begin without a palace:end: restore the end line (<!-- palace:end -->) or remove the block"},
		{"end without begin", "AGENTS.md", "- a\n<!-- palace:end -->\n", "AGENTS.md:2: palace:end without a palace:begin before it: remove it, or restore the begin line"},
		{"nested begin", "AGENTS.md", "<!-- palace:begin agents-md -->\n<!-- palace:begin agents-md -->\n<!-- palace:end -->\n", "AGENTS.md:2: a second palace:begin inside the block opened on line 1: remove one"},
		{"not a rule file", "main.go", "package main\n", "main.go:1: not a rule file: import AGENTS.md, CLAUDE.md, *.mdc, *.instructions.md, copilot-instructions.md or a Markdown list (.md)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := rulefiles.Parse(c.file, []byte(c.text), rulefiles.ParseOptions{})
			var pe *rulefiles.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want a *ParseError", err)
			}
			if err.Error() != c.want {
				t.Errorf("err = %q\nwant  %q", err, c.want)
			}
		})
	}
}

func TestMerge(t *testing.T) {
	block := "<!-- palace:begin agents-md -->\nnew\n<!-- palace:end -->\n"
	cases := []struct {
		name, existing, want, err string
	}{
		{"empty file", "", block, ""},
		{"append after text", "# Title\n\nHand text.\n", "# Title\n\nHand text.\n\n" + block, ""},
		{"append without trailing newline", "# Title", "# Title\n\n" + block, ""},
		{"replace keeps both sides byte for byte", "Top\r\n\n<!-- palace:begin agents-md -->\nold\n<!-- palace:end -->\n\nBottom  \r\n", "Top\r\n\n" + block + "\nBottom  \r\n", ""},
		{"marker inside a fence is text", "```\n<!-- palace:begin agents-md -->\n```\n", "```\n<!-- palace:begin agents-md -->\n```\n\n" + block, ""},
		{"unclosed fence before an appended block", "# T\n\n```go\ncode\n", "", "AGENTS.md:3: this code fence is never closed, so palace's block cannot be placed after it: close the fence, then export again"},
		{"begin without end", "a\n<!-- palace:begin agents-md -->\nb\n", "", "AGENTS.md:2: palace:begin without a palace:end: restore the end line (<!-- palace:end -->) or remove the block, then export again"},
		{"two blocks", "<!-- palace:begin agents-md -->\n<!-- palace:end -->\n<!-- palace:begin agents-md -->\n<!-- palace:end -->\n", "", "AGENTS.md:3: a second palace block (the first begins on line 1): remove one, then export again"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := rulefiles.Merge("AGENTS.md", []byte(c.existing), block)
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Errorf("got %q\nwant %q", got, c.want)
			}
			// Merging the result again changes nothing.
			again, err := rulefiles.Merge("AGENTS.md", got, block)
			if err != nil || string(again) != string(got) {
				t.Errorf("second merge changed the file: %q, %v", again, err)
			}
		})
	}
}
