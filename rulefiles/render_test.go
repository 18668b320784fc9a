package rulefiles_test

import (
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
	"go.yaml.in/yaml/v3"

	"github.com/palacehq/palace/rulefiles"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// sampleCards cover every tier, a core card, a canonical card with content,
// path, language and field scopes, an alternation glob and a ref_preferred
// card.
func sampleCards() []rulefiles.Card {
	return []rulefiles.Card{
		{ID: "kc_0003", Statement: "Prefer table tests with named cases.", Tier: "qi", Status: "promoted", Field: "go", RenderPref: "auto",
			Paths: []string{"**/*_test.go", "{cmd,host}/**"}, Value: 4},
		{ID: "kc_0001", Statement: "Run make test before every commit.", Content: "The hook runs it too; a red build is never pushed.", Tier: "dao_ren", Status: "promoted", Field: "general", RenderPref: "auto", Core: true, Value: 30},
		{ID: "kc_0002", Statement: "Never hold the write lock across a network call.", Content: "The store lock serialises writers.\n\nRelease it before any I/O:\n\n    mu.Unlock()\n    resp, err := client.Do(req)", Tier: "shu", Status: "canonical", Field: "general", RenderPref: "auto",
			Paths: []string{"store/**"}, Languages: []string{"go"}, Value: 28},
		{ID: "kc_0004", Statement: "Name migrations by what they change, not by date.", Tier: "shu", Status: "promoted", Field: "general", RenderPref: "ref_preferred",
			Paths: []string{"store/**"}, Languages: []string{"go"}, Fields: []string{"storage"}, Value: 2},
		{ID: "kc_0005", Statement: "Secrets never enter the repository.", Tier: "dao_tian", Status: "canonical", Field: "security", RenderPref: "auto", Core: true, Value: 40},
	}
}

// TestRenderGolden pins every target's files byte for byte (go test
// -update rewrites them), and checks that rendering is deterministic and
// independent of input order.
func TestRenderGolden(t *testing.T) {
	for _, target := range rulefiles.Targets {
		t.Run(string(target), func(t *testing.T) {
			files := rulefiles.Render(target, sampleCards(), rulefiles.Options{})
			reversed := sampleCards()
			for i, j := 0, len(reversed)-1; i < j; i, j = i+1, j-1 {
				reversed[i], reversed[j] = reversed[j], reversed[i]
			}
			if again := rulefiles.Render(target, reversed, rulefiles.Options{}); !reflect.DeepEqual(files, again) {
				t.Fatalf("rendering depends on the input order")
			}
			dir := filepath.Join("testdata", "golden", string(target))
			if *update {
				if err := os.RemoveAll(dir); err != nil {
					t.Fatal(err)
				}
			}
			var names []string
			for _, f := range files {
				golden := filepath.Join(dir, filepath.FromSlash(f.Path))
				names = append(names, f.Path)
				if *update {
					if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(golden, []byte(f.Content), 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run go test ./rulefiles -update)", err)
				}
				if f.Content != string(want) {
					t.Errorf("%s differs from %s:\n%s", f.Path, golden, f.Content)
				}
				if !strings.HasSuffix(f.Content, "\n") || strings.HasSuffix(f.Content, "\n\n") || strings.Contains(f.Content, "\r") {
					t.Errorf("%s: want LF endings and one trailing newline", f.Path)
				}
			}
			var onDisk []string
			_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					rel, _ := filepath.Rel(dir, p)
					onDisk = append(onDisk, filepath.ToSlash(rel))
				}
				return nil
			})
			if !*update && !reflect.DeepEqual(sorted(onDisk), sorted(names)) {
				t.Errorf("files %v, golden files %v", names, onDisk)
			}
		})
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestFrontMatterIsYAML parses every generated front matter with a YAML
// parser and checks the keys Cursor and Copilot read.
func TestFrontMatterIsYAML(t *testing.T) {
	for _, target := range []rulefiles.Target{rulefiles.Cursor, rulefiles.Copilot} {
		for _, f := range rulefiles.Render(target, sampleCards(), rulefiles.Options{}) {
			if f.Block {
				continue
			}
			fm, ok := frontMatter(f.Content)
			if !ok {
				t.Fatalf("%s: no front matter", f.Path)
			}
			var m map[string]any
			if err := yaml.Unmarshal([]byte(fm), &m); err != nil {
				t.Fatalf("%s: front matter is not YAML: %v\n%s", f.Path, err, fm)
			}
			if d, ok := m["description"].(string); !ok || d == "" {
				t.Errorf("%s: description %v, want a non-empty string", f.Path, m["description"])
			}
			switch target {
			case rulefiles.Cursor:
				always, ok := m["alwaysApply"].(bool)
				if !ok {
					t.Errorf("%s: alwaysApply %v is not a boolean", f.Path, m["alwaysApply"])
				}
				globs, hasGlobs := m["globs"].(string)
				scoped := strings.Contains(f.Path, "palace-general-") || strings.Contains(f.Path, "palace-go-")
				if scoped && (!hasGlobs || globs == "" || always) {
					t.Errorf("%s: a scoped file needs globs and alwaysApply false, got globs %q alwaysApply %v", f.Path, globs, always)
				}
				if f.Path == ".cursor/rules/palace-general.mdc" && (!always || hasGlobs) {
					t.Errorf("%s: an unscoped core file must be always applied, without globs", f.Path)
				}
				if f.Path == ".cursor/rules/palace-go-test-go-cmd-host-ba92ec.mdc" && globs != "**/*_test.go,cmd/**,host/**" {
					t.Errorf("%s: globs %q, want the alternation expanded", f.Path, globs)
				}
			case rulefiles.Copilot:
				if a, ok := m["applyTo"].(string); !ok || a == "" {
					t.Errorf("%s: applyTo %v, want a glob list", f.Path, m["applyTo"])
				}
			}
		}
	}
}

func frontMatter(s string) (string, bool) {
	if !strings.HasPrefix(s, "---\n") {
		return "", false
	}
	end := strings.Index(s[4:], "\n---\n")
	if end < 0 {
		return "", false
	}
	return s[4 : 4+end+1], true
}

// TestGlobSemantics pins the glob meaning palace relies on (see the package
// doc) on root-level and nested paths, with the matcher palace validates
// scopes with; the exported list must mean the same after expansion.
func TestGlobSemantics(t *testing.T) {
	cases := []struct {
		pattern string
		path    string
		want    bool
	}{
		{"**/*.go", "main.go", true},
		{"**/*.go", "store/db.go", true},
		{"**/*.go", "rulefiles/parse.go", true},
		{"*.go", "main.go", true},
		{"*.go", "store/db.go", false},
		{"store/**", "store/db.go", true},
		{"store/**", "store/sql/schema.go", true},
		{"store/**", "main.go", false},
		{"store/*.go", "store/db.go", true},
		{"store/*.go", "store/sql/schema.go", false},
		{"**/*_test.go", "main_test.go", true},
		{"**/*_test.go", "host/x_test.go", true},
		{"**/testdata/**", "testdata/a.txt", true},
		{"**/testdata/**", "host/testdata/a.txt", true},
		{"{cmd,host}/**", "cmd/palace/main.go", true},
		{"{cmd,host}/**", "store/db.go", false},
		{"**", "main.go", true},
		{"**", "a/b/c.go", true},
	}
	for _, c := range cases {
		got, err := doublestar.Match(c.pattern, c.path)
		if err != nil || got != c.want {
			t.Errorf("Match(%q, %q) = %v, %v; want %v", c.pattern, c.path, got, err, c.want)
		}
		// The expanded list (what Cursor and Copilot read) matches the same paths.
		matched := false
		for _, e := range rulefiles.Expand(c.pattern) {
			if ok, _ := doublestar.Match(e, c.path); ok {
				matched = true
			}
		}
		if matched != c.want {
			t.Errorf("expanded %q on %q = %v, want %v", c.pattern, c.path, matched, c.want)
		}
	}
}

func TestExpand(t *testing.T) {
	cases := map[string][]string{
		"store/**":          {"store/**"},
		"{cmd,host}/**":     {"cmd/**", "host/**"},
		"a/{b,{c,d}}/*.go":  {"a/b/*.go", "a/c/*.go", "a/d/*.go"},
		"{x,y}/{1,2}":       {"x/1", "x/2", "y/1", "y/2"},
		`lit\{a,b\}`:        {`lit\{a,b\}`},
		"unbalanced}/{a,b}": {"unbalanced}/{a,b}"},
	}
	for in, want := range cases {
		if got := rulefiles.Expand(in); !reflect.DeepEqual(got, want) {
			t.Errorf("Expand(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestBudget: under a small budget the most valuable cards stay whole, the
// rest shrink to compact or reference lines or are only counted, nothing is
// cut mid-text and the file stays within its budget.
func TestBudget(t *testing.T) {
	cards := sampleCards()
	for i := 0; i < 40; i++ {
		cards = append(cards, rulefiles.Card{ID: "kc_1" + strings.Repeat("0", 3-len(itoa(i))) + itoa(i), Statement: "Filler rule number " + itoa(i) + " with enough words to take room.", Tier: "qi", Status: "promoted", Field: "general", RenderPref: "auto"})
	}
	for _, budget := range []int{900, 1500, 3000} {
		f := rulefiles.Render(rulefiles.AgentsMD, cards, rulefiles.Options{Budget: budget})[0]
		if f.Used > budget || f.Used != len([]rune(f.Content)) {
			t.Fatalf("budget %d: used %d (content %d runes)", budget, f.Used, len([]rune(f.Content)))
		}
		forms := map[string]rulefiles.Form{}
		for _, p := range f.Cards {
			forms[p.ID] = p.Form
		}
		if len(f.Cards) != len(cards) {
			t.Errorf("budget %d: %d placements for %d cards", budget, len(f.Cards), len(cards))
		}
		if forms["kc_0005"] == rulefiles.FormOmitted || forms["kc_0001"] == rulefiles.FormOmitted {
			t.Errorf("budget %d: a core card was left out: %v", budget, forms)
		}
		omitted := 0
		for id, form := range forms {
			switch form {
			case rulefiles.FormOmitted:
				omitted++
				if strings.Contains(f.Content, "`"+id+"`") {
					t.Errorf("budget %d: omitted %s is in the file", budget, id)
				}
			default:
				if !strings.Contains(f.Content, "`"+id+"`") {
					t.Errorf("budget %d: %s (%s) is not cited", budget, id, form)
				}
			}
		}
		if omitted > 0 && !strings.Contains(f.Content, itoa(omitted)+" more card(s) are not shown") {
			t.Errorf("budget %d: %d omitted but no closing line:\n%s", budget, omitted, f.Content)
		}
		if budget == 900 && omitted == 0 {
			t.Errorf("budget 900 should leave cards out")
		}
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	s := ""
	for ; i > 0; i /= 10 {
		s = string(rune('0'+i%10)) + s
	}
	return s
}
