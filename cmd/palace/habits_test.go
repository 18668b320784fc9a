package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestVersionFlagComesFromTheBuild(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "palace")
	build := exec.Command("go", "build", "-ldflags", "-X main.version=v9.8.7-test", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != "palace v9.8.7-test\n" {
		t.Fatalf("palace --version = %q, want the -ldflags version", out)
	}
	out, err = exec.Command(bin, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "palace v9.8.7-test ") {
		t.Fatalf("palace version = %q (%v)", out, err)
	}
	// The test binary has no -ldflags version: --version still answers
	// with the same word as `palace version`.
	e := newEnv(t)
	v := e.ok("--version")
	if !strings.HasPrefix(v, "palace ") || !strings.HasPrefix(e.ok("version"), strings.TrimSpace(v)+" ") {
		t.Fatalf("--version %q disagrees with version %q", v, e.ok("version"))
	}
}

func TestSubcommandTypoIsUsageError(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct {
		args    []string
		suggest string
	}{
		{[]string{"card", "lst"}, "list"},
		{[]string{"policy", "tset"}, "test"},
		{[]string{"evidence", "shwo"}, "show"},
		{[]string{"completion", "bsh"}, "bash"},
		{[]string{"crad"}, "card"},
	} {
		r := e.run(c.args...)
		wantCode(t, r, 2, "unknown command", "Did you mean this?", c.suggest)
		if r.stdout != "" {
			t.Errorf("palace %v printed to stdout: %q", c.args, r.stdout)
		}
	}
	// A group alone still shows its help and succeeds.
	if out := e.ok("card"); !strings.Contains(out, "Available Commands") {
		t.Errorf("palace card: %q", out)
	}
	if _, err := os.Stat(filepath.Join(e.home, "palace.db")); !os.IsNotExist(err) {
		t.Errorf("a typo created the palace database (stat: %v)", err)
	}
}

// completions runs the shell completion request the generated scripts send.
func completions(t *testing.T, e *env, args ...string) []string {
	t.Helper()
	out := e.ok(append([]string{"__complete"}, args...)...)
	var ids []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(line, ":") {
			break
		}
		ids = append(ids, strings.SplitN(line, "\t", 2)[0])
	}
	return ids
}

func TestCompletion(t *testing.T) {
	e := newEnv(t)
	if got := completions(t, e, "card", "show", ""); len(got) != 0 {
		t.Fatalf("fresh home completes %v", got)
	}
	if _, err := os.Stat(e.home); !os.IsNotExist(err) {
		t.Fatalf("completion on a fresh home created %s (stat: %v)", e.home, err)
	}
	ev1 := e.record("first finding")
	ev2 := e.record("second finding")
	older := e.distill("Older card at a higher tier", "dao_ren", "--supporting", ev1)
	newer := e.distill("Newer card at a lower tier", "qi", "--supporting", ev2)
	// Most recent first, not the list's tier order.
	for _, args := range [][]string{{"card", "show", ""}, {"promote", ""}, {"gate", ""}, {"card", "link", ""}} {
		if got := completions(t, e, args...); strings.Join(got, " ") != newer+" "+older {
			t.Errorf("%v completes %v, want [%s %s]", args, got, newer, older)
		}
	}
	if got := completions(t, e, "card", "show", newer[:len(newer)-3]); len(got) != 1 || got[0] != newer {
		t.Errorf("prefix completes %v", got)
	}
	if got := completions(t, e, "card", "show", newer, ""); len(got) != 0 {
		t.Errorf("second argument completes %v", got)
	}
	for _, args := range [][]string{{"evidence", "show", ""}, {"card", "link", older, "--evidence", ""}, {"distill", "--supporting", ""}} {
		if got := completions(t, e, args...); strings.Join(got, " ") != ev2+" "+ev1 {
			t.Errorf("%v completes %v, want [%s %s]", args, got, ev2, ev1)
		}
	}
	enums := map[string][]string{
		"card list --tier":     {"dao_tian", "dao_ren", "shu", "qi"},
		"card list --status":   {"candidate", "promoted", "canonical", "demoted", "retired"},
		"card list --anchor":   {"worktree", "repo", "global", "all"},
		"record --anchor":      {"worktree", "repo", "global"},
		"card list --format":   {"text", "json"},
		"card link x --role":   {"supporting", "verification", "teaching", "counterexample"},
		"publish x --to":       {"repo", "global"},
		"promote x --target":   {"promoted", "canonical"},
		"demote x --target":    {"demoted", "retired"},
		"distill --status":     {"promoted", "canonical"},
		"evidence list --tier": nil,
	}
	for line, want := range enums {
		got := completions(t, e, append(strings.Fields(line), "")...)
		if want == nil {
			if len(got) > 0 && got[0] == "dao_tian" {
				t.Errorf("%s completes tiers: %v", line, got)
			}
			continue
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s completes %v, want %v", line, got, want)
		}
	}
	// The generated script is what users source.
	if out := e.ok("completion", "bash"); !strings.Contains(out, "__palace_") {
		t.Errorf("completion bash: %.200s", out)
	}
}

var escape = regexp.MustCompile("\x1b\\[[0-9;]*m")

func TestCardListAlignsWithColor(t *testing.T) {
	e := newEnv(t)
	ev := e.record("a finding")
	e.distill("A dao_ren card", "dao_ren", "--supporting", ev)
	e.distill("A qi card", "qi", "--supporting", ev)
	e.vars = append(e.vars, "CLICOLOR_FORCE=1", "NO_COLOR=")
	out := e.ok("card", "list")
	if !escape.MatchString(out) {
		t.Fatalf("CLICOLOR_FORCE=1 did not color:\n%s", out)
	}
	lines := strings.Split(escape.ReplaceAllString(out, ""), "\n")
	col := strings.Index(lines[0], "STATEMENT")
	for _, l := range lines[1:3] {
		if !strings.HasPrefix(l[col:], "A ") {
			t.Errorf("column STATEMENT starts at %d in the header but not in\n%q", col, l)
		}
	}
	e.vars = nil
	v := e.jsonOf("card", "list", "--limit", "1")
	if v["total"] != float64(2) || len(v["cards"].([]any)) != 1 {
		t.Errorf("card list --limit 1: total %v, %d cards", v["total"], len(v["cards"].([]any)))
	}
	if out := e.ok("card", "list", "--limit", "1"); !strings.Contains(out, "1 of 2 cards") {
		t.Errorf("card list --limit 1 footer:\n%s", out)
	}
}

func TestDoubleStarGlobMatchesRootFile(t *testing.T) {
	e, qi, _ := seedLSP(t)
	if err := os.WriteFile(filepath.Join(e.dir, "main.go"), []byte(lspTestGo), 0o644); err != nil {
		t.Fatal(err)
	}
	// The card is scoped to **/*.go: a root-level file is in scope.
	if out := e.ok("hints", "main.go"); !strings.Contains(out, "main.go:7:13: "+qi) {
		t.Fatalf("palace hints main.go with a **/*.go card:\n%s", out)
	}
	v := e.jsonOf("context", "--file", "main.go", "--language", "go")
	if !strings.Contains(mustJSON(t, v), "path main.go matches **/*.go") {
		t.Errorf("context --file main.go does not say the path matches:\n%s", mustJSON(t, v))
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
