package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
)

// ruleCard is a card as card list prints it, reduced to what the rule
// files must carry.
type ruleCard struct {
	ID        string `json:"id"`
	Statement string `json:"statement"`
	Content   string `json:"content"`
	Tier      string `json:"tier"`
	Status    string `json:"status"`
	Field     string `json:"field"`
	Scope     struct {
		Paths     []string `json:"paths"`
		Languages []string `json:"languages"`
		Fields    []string `json:"fields"`
	} `json:"scope"`
}

func (e *env) cards(args ...string) []ruleCard {
	e.t.Helper()
	var out struct {
		Cards []ruleCard `json:"cards"`
	}
	if err := json.Unmarshal([]byte(e.ok(append([]string{"card", "list", "--format", "json"}, args...)...)), &out); err != nil {
		e.t.Fatal(err)
	}
	return out.Cards
}

// ruleEnv is a palace whose repository holds governed cards of every
// shape the exports must carry: root-level and nested path scopes, an
// alternation, languages, fields, content, several fields and tiers; plus a
// worktree card and a candidate, which must not be exported.
func ruleEnv(t *testing.T) *env {
	e := newEnv(t)
	ev := e.record("observed in review", "--anchor", "repo")
	ver := e.record("verified in CI", "--anchor", "repo")
	direct := []string{"--anchor", "repo", "--supporting", ev, "--verification", ver, "--direct", "--status"}
	e.distill("Never hold the write lock across a network call.", "shu", append([]string{"--content", "The store lock serialises writers.\n\nRelease it before any I/O.",
		"--scope-path", "store/**", "--scope-lang", "go", "--field", "storage"}, append(direct, "canonical")...)...)
	e.distill("Run make test before every commit.", "dao_ren", append([]string{"--persistence", "foundational"}, append(direct, "promoted")...)...)
	e.distill("Prefer table tests with named cases.", "qi", append([]string{"--field", "go", "--scope-path", "**/*_test.go", "--scope-path", "{cmd,host}/**"}, append(direct, "promoted")...)...)
	e.distill("Keep root-level Go files thin.", "qi", append([]string{"--field", "go", "--scope-path", "*.go", "--scope-field", "layout"}, append(direct, "promoted")...)...)
	e.distill("A worktree-only note.", "qi", "--supporting", e.record("local"), "--direct", "--status", "promoted")
	e.distill("A candidate nobody reviewed.", "qi", "--anchor", "repo", "--supporting", ev)
	return e
}

// exported is the set of files a target writes, relative to the checkout.
func exportedFiles(t *testing.T, root, target string) []string {
	t.Helper()
	var out []string
	switch target {
	case "agents-md":
		out = []string{"AGENTS.md"}
	case "claude-md":
		out = []string{"CLAUDE.md"}
	default:
		dir := map[string]string{"cursor": ".cursor/rules", "copilot": ".github/instructions"}[target]
		m, _ := filepath.Glob(filepath.Join(root, dir, "palace-*"))
		for _, p := range m {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		if target == "copilot" {
			out = append(out, ".github/copilot-instructions.md")
		}
	}
	sort.Strings(out)
	return out
}

// TestRuleFilesRoundTrip exports each target from one palace and imports
// the files into a fresh one (--include-generated): every governed card of
// the repository comes back with its statement, tier, field and scope, as a
// candidate; worktree cards and candidates were never exported.
func TestRuleFilesRoundTrip(t *testing.T) {
	t.Parallel()
	a := ruleEnv(t)
	want := map[string]ruleCard{}
	for _, c := range a.cards("--anchor", "repo") {
		if c.Status == "promoted" || c.Status == "canonical" {
			want[c.Statement] = c
		}
	}
	if len(want) != 4 {
		t.Fatalf("seeded %d governed repo cards, want 4", len(want))
	}
	for _, target := range []string{"agents-md", "claude-md", "cursor", "copilot"} {
		t.Run(target, func(t *testing.T) {
			a.ok("export", "--to", target)
			files := exportedFiles(t, a.dir, target)
			for _, f := range files {
				data, err := os.ReadFile(filepath.Join(a.dir, f))
				if err != nil {
					t.Fatal(err)
				}
				for _, leak := range []string{"A worktree-only note.", "A candidate nobody reviewed."} {
					if bytes.Contains(data, []byte(leak)) {
						t.Errorf("%s carries %q", f, leak)
					}
				}
			}
			b := &env{t: t, home: filepath.Join(t.TempDir(), "home"), dir: a.dir}
			b.ok(append([]string{"import", "--include-generated"}, files...)...)
			got := b.cards("--anchor", "repo")
			if len(got) != len(want) {
				t.Fatalf("imported %d cards, want %d: %+v", len(got), len(want), got)
			}
			for _, g := range got {
				w, ok := want[g.Statement]
				if !ok {
					t.Errorf("imported an unknown statement %q", g.Statement)
					continue
				}
				if g.Status != "candidate" {
					t.Errorf("%q imported as %s, want candidate", g.Statement, g.Status)
				}
				if g.Tier != w.Tier || g.Field != w.Field || !reflect.DeepEqual(g.Scope, w.Scope) {
					t.Errorf("%q: tier %s field %s scope %+v, want %s %s %+v", g.Statement, g.Tier, g.Field, g.Scope, w.Tier, w.Field, w.Scope)
				}
			}
			// Without --include-generated the same files are recognised as
			// palace's and nothing is imported.
			c := &env{t: t, home: filepath.Join(t.TempDir(), "home"), dir: a.dir}
			out := c.ok(append([]string{"import"}, files...)...)
			if !strings.Contains(out, "skipped the generated palace block") || len(c.cards("--anchor", "repo")) != 0 {
				t.Errorf("generated blocks were not skipped:\n%s", out)
			}
		})
	}
}

// TestExportCheck: --check exits 0 on fresh files, 1 once a card is
// promoted, 0 again after a re-export; hand-written text around the block is
// kept byte for byte, and a second export is byte-identical.
func TestExportCheck(t *testing.T) {
	t.Parallel()
	e := ruleEnv(t)
	hand := "# Widgets\r\n\r\nHand-written intro.\n\n- Use gofmt.\n"
	tail := "\n## Hand-written footer\n\nKeep me.\n"
	if err := os.WriteFile(filepath.Join(e.dir, "AGENTS.md"), []byte(hand), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"agents-md", "cursor", "copilot"} {
		e.ok("export", "--to", target)
		wantCode(t, e.run("export", "--to", target, "--check"), 0)
	}
	// Text added after the block by hand survives the next export.
	agents := filepath.Join(e.dir, "AGENTS.md")
	data, _ := os.ReadFile(agents)
	if err := os.WriteFile(agents, append(data, tail...), 0o644); err != nil {
		t.Fatal(err)
	}
	first := snapshot(t, e.dir)

	ev := e.record("seen twice", "--anchor", "repo")
	ver := e.record("checked twice", "--anchor", "repo")
	id := e.distill("Wrap every error with context.", "shu", "--anchor", "repo", "--supporting", ev, "--verification", ver, "--scope-path", "cmd/**")
	for _, target := range []string{"agents-md", "cursor", "copilot"} {
		wantCode(t, e.run("export", "--to", target, "--check"), 0) // a candidate is not exported
	}
	e.ok("promote", id, "--reason", "reviewed")
	for _, target := range []string{"agents-md", "cursor", "copilot"} {
		r := e.run("export", "--to", target, "--check")
		wantCode(t, r, 1)
		if !strings.Contains(r.stdout, "stale") {
			t.Errorf("%s --check: %q does not say stale", target, r.stdout)
		}
	}
	if !reflect.DeepEqual(snapshot(t, e.dir), first) {
		t.Fatal("--check wrote files")
	}
	for _, target := range []string{"agents-md", "cursor", "copilot"} {
		e.ok("export", "--to", target)
		wantCode(t, e.run("export", "--to", target, "--check"), 0)
	}
	data, _ = os.ReadFile(agents)
	if !strings.HasPrefix(string(data), hand+"\n<!-- palace:begin agents-md -->\n") || !strings.HasSuffix(string(data), "<!-- palace:end -->\n"+tail) {
		t.Errorf("hand-written text not kept:\n%s", data)
	}
	if !strings.Contains(string(data), "Wrap every error with context. (`"+id+"`") {
		t.Errorf("promoted card %s not exported:\n%s", id, data)
	}
	second := snapshot(t, e.dir)
	for _, target := range []string{"agents-md", "cursor", "copilot"} {
		out := e.ok("export", "--to", target)
		if strings.Contains(out, "written") || strings.Contains(out, "removed") {
			t.Errorf("re-export of %s changed files:\n%s", target, out)
		}
	}
	if !reflect.DeepEqual(snapshot(t, e.dir), second) {
		t.Error("a re-export is not byte-identical")
	}

	// Demoting the only card of a scope removes its generated files; a
	// hand-written file in the same directory is left alone.
	handRule := filepath.Join(e.dir, ".cursor", "rules", "palace-mine.mdc")
	if err := os.WriteFile(handRule, []byte("---\ndescription: mine\n---\n- Mine.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cex := e.record("broke in prod", "--anchor", "repo")
	e.ok("demote", id, "--reason", "wrong", "--counterexample", cex)
	out := e.ok("export", "--to", "cursor")
	if !strings.Contains(out, "removed") {
		t.Errorf("no generated file removed after the demote:\n%s", out)
	}
	if _, err := os.Stat(handRule); err != nil {
		t.Errorf("hand-written palace-mine.mdc was touched: %v", err)
	}
}

// snapshot reads every file of the checkout except .git.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[p] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestExportFrontMatterGlobs: the globs a Cursor or Copilot file declares
// match the same root-level and nested paths palace's own scope matches
// (the card lands in `palace context --file` exactly where the glob does).
func TestExportFrontMatterGlobs(t *testing.T) {
	t.Parallel()
	e := ruleEnv(t)
	e.ok("export", "--to", "copilot")
	e.ok("export", "--to", "cursor")
	globsOf := map[string][]string{} // statement → applyTo / globs patterns
	for _, f := range append(exportedFiles(t, e.dir, "copilot"), exportedFiles(t, e.dir, "cursor")...) {
		if strings.HasSuffix(f, "copilot-instructions.md") {
			continue
		}
		data, _ := os.ReadFile(filepath.Join(e.dir, f))
		text := string(data)
		var globs []string
		for _, l := range strings.Split(text, "\n") {
			for _, key := range []string{"applyTo: ", "globs: "} {
				if v, ok := strings.CutPrefix(l, key); ok {
					var s string
					if err := json.Unmarshal([]byte(v), &s); err != nil {
						t.Fatalf("%s: %s is not a quoted string: %v", f, l, err)
					}
					globs = strings.Split(s, ",")
				}
			}
		}
		for _, stmt := range []string{"Keep root-level Go files thin.", "Prefer table tests with named cases.", "Never hold the write lock across a network call."} {
			if strings.Contains(text, stmt) {
				globsOf[stmt+" "+filepath.Ext(f)] = globs
			}
		}
	}
	cases := []struct {
		stmt, file string
		want       bool
	}{
		{"Keep root-level Go files thin.", "main.go", true},
		{"Keep root-level Go files thin.", "store/db.go", false},
		{"Prefer table tests with named cases.", "main_test.go", true},
		{"Prefer table tests with named cases.", "store/db_test.go", true},
		{"Prefer table tests with named cases.", "cmd/palace/main.go", true},
		{"Prefer table tests with named cases.", "store/db.go", false},
		{"Never hold the write lock across a network call.", "store/db.go", true},
		{"Never hold the write lock across a network call.", "store/sql/schema.go", true},
		{"Never hold the write lock across a network call.", "main.go", false},
	}
	for _, c := range cases {
		for _, ext := range []string{".md", ".mdc"} {
			globs, ok := globsOf[c.stmt+" "+ext]
			if !ok {
				t.Fatalf("%q not exported to a %s file", c.stmt, ext)
			}
			matched := false
			for _, g := range globs {
				if m, _ := doublestar.Match(g, c.file); m {
					matched = true
				}
			}
			if matched != c.want {
				t.Errorf("%s globs %v on %s = %v, want %v", ext, globs, c.file, matched, c.want)
			}
		}
		// palace's own scope agrees: without a query about the card, a path
		// miss leaves it out.
		args := []string{"context", "--dry-run", "--format", "json", "--file", c.file, "--language", "go", "--field", "layout", "--budget", "20000"}
		var pack struct {
			Items []struct {
				Statement string `json:"statement"`
			} `json:"items"`
		}
		if err := json.Unmarshal([]byte(e.ok(args...)), &pack); err != nil {
			t.Fatal(err)
		}
		in := false
		for _, it := range pack.Items {
			in = in || it.Statement == c.stmt
		}
		if in != c.want {
			t.Errorf("palace context --file %s: %q in pack = %v, want %v", c.file, c.stmt, in, c.want)
		}
	}
}

// TestExportLeavesOutContestedAndExpired: a governed card with a newer
// counterexample, or past its expiry date, is left out with the reason.
func TestExportLeavesOutContestedAndExpired(t *testing.T) {
	t.Parallel()
	e := ruleEnv(t)
	ev := e.record("seen", "--anchor", "repo")
	// distill refuses an expiry in the past; a human expires a card with an audit action.
	old := e.distill("An expired rule.", "qi", "--anchor", "repo", "--supporting", ev, "--direct", "--status", "promoted")
	e.ok("audit", "action", old, "--action", "set_expiry", "--value", "2020-01-01", "--reason", "superseded")
	disputed := e.distill("A disputed rule.", "qi", "--anchor", "repo", "--supporting", ev, "--direct", "--status", "promoted")
	e.ok("card", "link", disputed, "--role", "counterexample", "--evidence", e.record("it failed here", "--anchor", "repo"))
	var res struct {
		LeftOut []struct {
			ID     string `json:"id"`
			Reason string `json:"reason"`
		} `json:"left_out"`
	}
	if err := json.Unmarshal([]byte(e.ok("export", "--to", "agents-md", "--format", "json")), &res); err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	for _, l := range res.LeftOut {
		reasons[l.ID] = l.Reason
	}
	if !strings.HasPrefix(reasons[old], "expired on 2020-01-01") || !strings.HasPrefix(reasons[disputed], "contested") {
		t.Errorf("left out %v, want %s expired and %s contested", reasons, old, disputed)
	}
	data, _ := os.ReadFile(filepath.Join(e.dir, "AGENTS.md"))
	if strings.Contains(string(data), "An expired rule.") || strings.Contains(string(data), "A disputed rule.") {
		t.Errorf("AGENTS.md carries a left-out card:\n%s", data)
	}
}
