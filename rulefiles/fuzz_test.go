package rulefiles_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/palacehq/palace/rulefiles"
)

// FuzzParse: any bytes under any rule-file name parse or fail with a
// *ParseError naming a line of the file, never panic; a parsed rule's
// statement stays within the card limit and its line inside the file.
func FuzzParse(f *testing.F) {
	_ = filepath.WalkDir(filepath.Join("testdata", "golden"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(filepath.Base(p), b, true)
			}
		}
		return nil
	})
	f.Add("AGENTS.md", []byte("- a\n  b\n\n  c\n1. d\n```\n- e\n```\n"), false)
	f.Add("x.mdc", []byte("---\nglobs: [a/**, \"b/**\"]\nalwaysApply: false\n---\npara\n"), false)
	f.Add("x.instructions.md", []byte("---\napplyTo: >\n  **/*.go\n---\n- r\n"), false)
	f.Add("CLAUDE.md", []byte("<!-- palace:begin claude-md -->\n- s (`kc_1` · shu · promoted · paths `a`)\n<!-- palace:end -->\n"), true)
	f.Fuzz(func(t *testing.T, name string, data []byte, generated bool) {
		if _, ok := rulefiles.KindOf(name); !ok {
			name = "AGENTS.md"
		}
		doc, err := rulefiles.Parse(name, data, rulefiles.ParseOptions{IncludeGenerated: generated})
		lines := strings.Count(string(data), "\n") + 1
		if err != nil {
			var pe *rulefiles.ParseError
			if !errors.As(err, &pe) || pe.Line < 1 || pe.Line > lines {
				t.Fatalf("error %v (%T) does not name a line of %d", err, err, lines)
			}
			return
		}
		for _, r := range doc.Rules {
			if r.Line < 1 || r.Line > lines {
				t.Fatalf("rule at line %d of %d", r.Line, lines)
			}
			if !r.Generated && utf8.RuneCountInString(r.Statement) > rulefiles.MaxStatementRunes {
				t.Fatalf("statement of %d runes", utf8.RuneCountInString(r.Statement))
			}
		}
	})
}

// FuzzMerge: merging a block into any text keeps the text outside the
// block, and merging again changes nothing.
func FuzzMerge(f *testing.F) {
	f.Add([]byte("# T\n\n- a\n"))
	f.Add([]byte("x\n<!-- palace:begin agents-md -->\nold\n<!-- palace:end -->\ny\n"))
	f.Add([]byte("```\n<!-- palace:end -->\n```\n"))
	block := rulefiles.Render(rulefiles.AgentsMD, sampleCards(), rulefiles.Options{})[0].Content
	f.Fuzz(func(t *testing.T, existing []byte) {
		got, err := rulefiles.Merge("AGENTS.md", existing, block)
		if err != nil {
			var pe *rulefiles.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			return
		}
		if !strings.Contains(string(got), block) {
			t.Fatalf("block missing from the result")
		}
		again, err := rulefiles.Merge("AGENTS.md", got, block)
		if err != nil || string(again) != string(got) {
			t.Fatalf("second merge: %v, changed %v", err, string(again) != string(got))
		}
	})
}
