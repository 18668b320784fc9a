package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// counts is how many cards and evidence rows the palace holds.
func (e *env) counts() (cards, evidence int) {
	e.t.Helper()
	cards = len(e.cards("--anchor", "all", "--all-repos"))
	var ev struct {
		Total int `json:"total"`
	}
	if err := json.Unmarshal([]byte(e.ok("evidence", "list", "--anchor", "all", "--all-repos", "--format", "json")), &ev); err != nil {
		e.t.Fatal(err)
	}
	return cards, ev.Total
}

func (e *env) write(rel string, data []byte) string {
	e.t.Helper()
	p := filepath.Join(e.dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		e.t.Fatal(err)
	}
	return rel
}

// TestImportBadInput: each bad file exits 2 naming the file (and the line
// where there is one), alone or next to a good file, and nothing at all is
// imported. A rule holding a secret is refused like every secret palace
// meets (exit 1, redacted), naming the file and line too.
func TestImportBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	good := e.write("AGENTS.md", []byte("# Rules\n\n- Use gofmt.\n- Keep PRs small.\n"))
	big := bytes.Repeat([]byte("- a rule that repeats itself\n"), 10<<20/29+1)
	cases := []struct {
		name string
		rel  string
		data []byte
		want string
		code int
	}{
		{"malformed front matter", ".cursor/rules/bad.mdc", []byte("---\ndescription: x\nnot yaml at all\n---\n- rule\n"), ".cursor/rules/bad.mdc:3: front matter line", 2},
		{"unclosed front matter", ".github/instructions/x.instructions.md", []byte("---\napplyTo: \"**\"\n"), ".github/instructions/x.instructions.md:1: front matter opened with --- is not closed", 2},
		{"10 MB file", "big.md", big, "big.md is ", 2},
		{"conflict markers", "CLAUDE.md", []byte("- a\n<<<<<<< HEAD\n- b\n=======\n- c\n>>>>>>> theirs\n"), "CLAUDE.md:2: merge conflict marker", 2},
		{"binary", "notes.md", []byte("- a\n- b\n\x00\xff\xfe"), "notes.md:3: binary data", 2},
		{"invalid UTF-8", "notes2.md", []byte("- a\n- caf\xe9\n"), "notes2.md:2: not valid UTF-8", 2},
		{"unclosed palace block", "docs/AGENTS.md", []byte("- a\n<!-- palace:begin agents-md -->\n- b\n"), "docs/AGENTS.md:2: palace:begin without a palace:end", 2},
		{"secret in a rule", "SECRETS.md", []byte("- Use the key AKIAIOSFODNN7EXAMPLE for staging.\n"), "SECRETS.md:1: ", 1},
		{"not a rule file", "main.go", []byte("package main\n"), "main.go:1: not a rule file", 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rel := e.write(c.rel, c.data)
			for _, args := range [][]string{{"import", rel}, {"import", good, rel}} {
				r := e.run(args...)
				wantCode(t, r, c.code, c.want)
				if cards, ev := e.counts(); cards != 0 || ev != 0 {
					t.Fatalf("%v: %d cards and %d evidence imported half-way", args, cards, ev)
				}
			}
		})
	}
	// A missing file is bad input too.
	wantCode(t, e.run("import", "nope.md"), 2, "nope.md")
}

// TestImportIdempotentCandidates: rules become evidence with FILE#Lline
// and candidates with the file's scope; importing again — even after the
// rules moved down a line — adds nothing, and nothing is ever promoted.
func TestImportIdempotentCandidates(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("AGENTS.md", []byte("# Rules\n\n- Use gofmt.\n- Keep PRs small.\n"))
	e.write("api/AGENTS.md", []byte("- Return errors, never panic.\n"))
	e.write(".cursor/rules/ts.mdc", []byte("---\ndescription: TS\nglobs: src/**/*.ts, src/**/*.tsx\nalwaysApply: false\n---\nUse strict mode everywhere.\n"))
	e.write(".github/instructions/go.instructions.md", []byte("---\napplyTo: \"**/*.go\"\n---\n- Wrap errors with %w.\n"))
	files := []string{"AGENTS.md", "api/AGENTS.md", ".cursor/rules/ts.mdc", ".github/instructions/go.instructions.md"}
	var res struct {
		Files []struct {
			Rules []struct {
				SourceRef  string `json:"source_ref"`
				EvidenceID string `json:"evidence_id"`
				CardID     string `json:"card_id"`
			} `json:"rules"`
		} `json:"files"`
		EvidenceNew int `json:"evidence_new"`
		CardsNew    int `json:"cards_new"`
	}
	if err := json.Unmarshal([]byte(e.ok(append([]string{"import", "--format", "json"}, files...)...)), &res); err != nil {
		t.Fatal(err)
	}
	if res.EvidenceNew != 5 || res.CardsNew != 5 {
		t.Fatalf("first import: %d evidence, %d cards, want 5 and 5", res.EvidenceNew, res.CardsNew)
	}
	refs := map[string]string{}
	for _, f := range res.Files {
		for _, r := range f.Rules {
			refs[r.SourceRef] = r.CardID
		}
	}
	for _, want := range []string{"AGENTS.md#L3", "AGENTS.md#L4", "api/AGENTS.md#L1", ".cursor/rules/ts.mdc#L6", ".github/instructions/go.instructions.md#L4"} {
		if refs[want] == "" {
			t.Errorf("no rule with source_ref %s in %v", want, refs)
		}
	}
	scopes := map[string][]string{}
	for _, c := range e.cards("--anchor", "repo") {
		if c.Status != "candidate" {
			t.Errorf("%s imported as %s", c.ID, c.Status)
		}
		scopes[c.Statement] = c.Scope.Paths
	}
	for stmt, want := range map[string]string{
		"Use gofmt.":                  "",
		"Return errors, never panic.": "api/**",
		"Use strict mode everywhere.": "src/**/*.ts,src/**/*.tsx",
		"Wrap errors with %w.":        "**/*.go",
	} {
		if got := strings.Join(scopes[stmt], ","); got != want {
			t.Errorf("%q scope %q, want %q", stmt, got, want)
		}
	}
	// Again, after a line was added above the rules.
	e.write("AGENTS.md", []byte("# Rules\n\nSee below.\n\n- Use gofmt.\n- Keep PRs small.\n"))
	if err := json.Unmarshal([]byte(e.ok(append([]string{"import", "--format", "json"}, files...)...)), &res); err != nil {
		t.Fatal(err)
	}
	if res.EvidenceNew != 0 || res.CardsNew != 0 {
		t.Errorf("re-import added %d evidence and %d cards", res.EvidenceNew, res.CardsNew)
	}
	// The same rule in CLAUDE.md is new evidence for the same card.
	e.write("CLAUDE.md", []byte("- Use gofmt.\n"))
	if err := json.Unmarshal([]byte(e.ok("import", "CLAUDE.md", "--format", "json")), &res); err != nil {
		t.Fatal(err)
	}
	if res.EvidenceNew != 1 || res.CardsNew != 0 || res.Files[0].Rules[0].CardID != refs["AGENTS.md#L3"] {
		t.Errorf("CLAUDE.md: %d evidence, %d cards, card %s; want 1, 0, %s", res.EvidenceNew, res.CardsNew, res.Files[0].Rules[0].CardID, refs["AGENTS.md#L3"])
	}
	if cards, _ := e.counts(); cards != 5 {
		t.Errorf("%d cards after the re-imports, want 5", cards)
	}
}

// TestContextHook feeds recorded Claude Code and Gemini CLI hook payloads
// to the real binary on stdin, run from outside the repository (the
// payload's cwd names it), and checks the answer's shape: exactly
// {"hookSpecificOutput": {"hookEventName", "additionalContext"}} for Claude
// Code, {"hookSpecificOutput": {"additionalContext"}} for Gemini CLI, with
// the pack as the context.
func TestContextHook(t *testing.T) {
	t.Parallel()
	e, id := contextEnv(t)
	core := "Run make test before every commit."
	e.distill(core, "shu", "--supporting", e.record("CI caught it"), "--persistence", "foundational", "--direct", "--status", "promoted")
	elsewhere := t.TempDir()
	for _, c := range []struct {
		agent, file, event string
		prompt             bool
	}{
		{"claude-code", "claude-code-user-prompt-submit.json", "UserPromptSubmit", true},
		{"claude-code", "claude-code-session-start.json", "SessionStart", false},
		{"gemini-cli", "gemini-cli-before-agent.json", "BeforeAgent", true},
		{"gemini-cli", "gemini-cli-session-start.json", "SessionStart", false},
	} {
		t.Run(c.agent+" "+c.event, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", "hooks", c.file))
			if err != nil {
				t.Fatal(err)
			}
			cwd, _ := json.Marshal(e.dir)
			payload := bytes.ReplaceAll(raw, []byte(`"{{CWD}}"`), cwd)
			r := e.runIn(elsewhere, payload, "context", "--hook", c.agent, "--dry-run")
			wantCode(t, r, 0)
			var out map[string]map[string]string
			dec := json.NewDecoder(strings.NewReader(r.stdout))
			if err := dec.Decode(&out); err != nil || dec.More() {
				t.Fatalf("stdout is not one JSON object of objects of strings: %v\n%s", err, r.stdout)
			}
			if len(out) != 1 || out["hookSpecificOutput"] == nil {
				t.Fatalf("top-level keys %v, want only hookSpecificOutput", out)
			}
			hso := out["hookSpecificOutput"]
			wantKeys := 1
			if c.agent == "claude-code" {
				wantKeys = 2
				if hso["hookEventName"] != c.event {
					t.Errorf("hookEventName %q, want %q", hso["hookEventName"], c.event)
				}
			}
			if _, ok := hso["additionalContext"]; len(hso) != wantKeys || !ok {
				t.Fatalf("hookSpecificOutput = %v, want %d keys with additionalContext", hso, wantKeys)
			}
			ctx := hso["additionalContext"]
			// A prompt about the store gets the store's card; a session
			// starts without a query and gets the foundational card.
			if strings.Contains(ctx, id) != c.prompt {
				t.Errorf("additionalContext mentions %s = %v, want %v:\n%s", id, !c.prompt, c.prompt, ctx)
			}
			if !c.prompt && !strings.Contains(ctx, core) {
				t.Errorf("additionalContext lacks the foundational card:\n%s", ctx)
			}
		})
	}
	// A broken payload never exits 2 (the agent would erase the prompt):
	// exit 1, the reason on stderr, nothing on stdout.
	for _, bad := range []struct{ agent, payload string }{
		{"claude-code", "not json"},
		{"claude-code", `{"hook_event_name":"PreToolUse","cwd":"/"}`},
		{"claude-code", `{"hook_event_name":"BeforeAgent","cwd":"/"}`},
		{"gemini-cli", `{"hook_event_name":"UserPromptSubmit","cwd":"/"}`},
		{"claude-code", `{"prompt":"x"}`},
		{"claude-code", ""},
		{"claude-code", `{"hook_event_name":"SessionStart"} {}`},
		{"cursor", "{}"},
	} {
		r := e.runIn(elsewhere, []byte(bad.payload), "context", "--hook", bad.agent, "--dry-run")
		wantCode(t, r, 1, "palace: ")
		if r.stdout != "" {
			t.Errorf("%s payload %q: stdout %q, want nothing", bad.agent, bad.payload, r.stdout)
		}
	}
	// --budget 0 is refused in a hook too, with the hook's exit 1.
	r := e.runIn(elsewhere, []byte(`{"hook_event_name":"SessionStart","cwd":"/"}`), "context", "--hook", "claude-code", "--budget", "0")
	wantCode(t, r, 1, "--budget 0 leaves no room")
}

// TestExportBadInput: a broken block, a linked AGENTS.md, an unknown target
// and a directory outside git exit 2 naming the problem, and write nothing.
func TestExportBadInput(t *testing.T) {
	t.Parallel()
	e := ruleEnv(t)
	broken := "# Mine\n\n<!-- palace:begin agents-md -->\n- half a block\n"
	e.write("AGENTS.md", []byte(broken))
	before := snapshot(t, e.dir)
	wantCode(t, e.run("export", "--to", "agents-md"), 2, "AGENTS.md:3: palace:begin without a palace:end")
	wantCode(t, e.run("export", "--to", "agents-md", "--check"), 2, "AGENTS.md:3:")
	e.write("CLAUDE.md", []byte("<!-- palace:begin claude-md -->\n<!-- palace:end -->\n<!-- palace:begin claude-md -->\n<!-- palace:end -->\n"))
	wantCode(t, e.run("export", "--to", "claude-md"), 2, "CLAUDE.md:3: a second palace block")
	before["CLAUDE.md"] = ""
	if err := os.Remove(filepath.Join(e.dir, "CLAUDE.md")); err != nil {
		t.Fatal(err)
	}
	delete(before, "CLAUDE.md")
	outside := filepath.Join(t.TempDir(), "secret.md")
	if err := os.WriteFile(outside, []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, outside, filepath.Join(e.dir, "CLAUDE.md"))
	wantCode(t, e.run("export", "--to", "claude-md"), 2, "symbolic link")
	if b, _ := os.ReadFile(outside); string(b) != "outside\n" {
		t.Errorf("export wrote through a link: %q", b)
	}
	if err := os.Remove(filepath.Join(e.dir, "CLAUDE.md")); err != nil {
		t.Fatal(err)
	}
	wantCode(t, e.run("export", "--to", "windsurf"), 2, `--to "windsurf" is not a target: use agents-md, claude-md, cursor, copilot`)
	wantCode(t, e.run("export"), 2, "--to is required: use agents-md")
	wantCode(t, e.run("export", "--to", "cursor", "--check", "--dry-run"), 2, "do not go together")
	wantCode(t, e.runIn(t.TempDir(), nil, "export", "--to", "cursor"), 2, "not inside a git checkout")
	after := snapshot(t, e.dir)
	for k := range before {
		if before[k] != after[k] {
			t.Errorf("%s changed", k)
		}
	}
	if len(after) != len(before) {
		t.Errorf("files created: %d before, %d after", len(before), len(after))
	}
	// --dry-run shows the new file and writes nothing.
	e.write("AGENTS.md", []byte("# Mine\n"))
	r := e.run("export", "--to", "agents-md", "--dry-run")
	wantCode(t, r, 0)
	if !strings.Contains(r.stdout, "would_write  AGENTS.md") || !strings.Contains(r.stdout, "Run make test before every commit.") {
		t.Errorf("dry run output:\n%s", r.stdout)
	}
	if b, _ := os.ReadFile(filepath.Join(e.dir, "AGENTS.md")); string(b) != "# Mine\n" {
		t.Errorf("--dry-run wrote AGENTS.md: %q", b)
	}
}

// TestExportImportCompletion: --to completes export targets (not publish's
// repo/global), import's --anchor the anchors a file can go to.
func TestExportImportCompletion(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if got := completions(t, e, "export", "--to", ""); strings.Join(got, ",") != "agents-md,claude-md,cursor,copilot" {
		t.Errorf("export --to completes %v", got)
	}
	if got := completions(t, e, "import", "--anchor", ""); strings.Join(got, ",") != "worktree,repo,global" {
		t.Errorf("import --anchor completes %v", got)
	}
}
