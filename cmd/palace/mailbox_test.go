package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palacehq/palace/mailbox"
)

// letterLine is one valid box line.
func letterLine(what, extra string) string {
	if extra != "" {
		extra = "," + extra
	}
	return fmt.Sprintf(`{"ts":"2025-06-01T12:00:00Z","agent":"claude","class":"tool_error","what":%q%s}`, what, extra)
}

func (e *env) writeFile(rel string, content []byte) string {
	e.t.Helper()
	p := filepath.Join(e.dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, content, 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

func TestMailboxFile(t *testing.T) {
	e := newEnv(t)
	spool := filepath.Join(e.home, "field-reports.jsonl")

	// In agent mode the agent defaults to $PALACE_AGENT.
	e.vars = []string{"PALACE_MODE=agent", "PALACE_AGENT=claude-7"}
	out := e.jsonOf("mailbox", "file", "--class", "tool_error", "--what", "go test hung", "--repo", ".", "--tool", "bash", "--external")
	e.vars = nil
	letter := out["letter"].(map[string]any)
	if id, _ := out["id"].(string); len(id) != 12 || letter["agent"] != "claude-7" || letter["external"] != true || !strings.HasSuffix(letter["repo"].(string), "/repo") {
		t.Errorf("filed %v", out)
	}
	r := e.runIn(e.dir, []byte(`{"agent": "claude",
	  "class": "missing_doc", "what": "no install step", "answers": ["`+out["id"].(string)+`"]}`), "mailbox", "file", "-")
	wantCode(t, r, 0)
	if !strings.HasPrefix(r.stdout, "filed ") || !strings.Contains(r.stdout, "distribute delivers it to the global box") {
		t.Errorf("text output %q", r.stdout)
	}
	before := readString(t, spool)
	if n := strings.Count(before, "\n"); n != 2 {
		t.Fatalf("spool has %d lines:\n%s", n, before)
	}

	tests := []struct {
		name   string
		stdin  string
		args   []string
		code   int
		stderr []string
	}{
		{"secret", "", []string{"--class", "leak", "--what", "token ghp_0123456789abcdefghijklmnopqrstuvwxyzAB in the log"}, 1,
			[]string{"letter refused, it contains a secret: github-token", `in "what"`, "palace:allow-secret"}},
		{"secret on stdin", `{"agent":"a","class":"c","what":"w","snippet":"AKIAIOSFODNN7EXAMPLF"}`, []string{"-"}, 1,
			[]string{`aws-access-key-id (AWS access key ID) in "snippet": AKIA************MPLF`}},
		{"missing class", "", []string{"--what", "x"}, 2, []string{`missing required field "class"`}},
		{"bad answers", "", []string{"--class", "c", "--what", "w", "--answers", "nope"}, 2, []string{`"answers[0]" is not a letter id`}},
		{"bad JSON", `{"agent":`, []string{"-"}, 2, []string{"read letter from stdin: letter: invalid JSON"}},
		{"flags and stdin", `{}`, []string{"-", "--class", "c"}, 2, []string{"either with flags or as JSON on stdin"}},
		{"nothing", "", nil, 2, []string{"give the letter with --class and --what"}},
		{"stray argument", "", []string{"hello"}, 2, []string{`unexpected argument "hello"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.runIn(e.dir, []byte(tt.stdin), append([]string{"mailbox", "file"}, tt.args...)...)
			wantCode(t, r, tt.code, tt.stderr...)
			for _, secret := range []string{"ghp_0123456789abcdefghijklmnopqrstuvwxyzAB", "AKIAIOSFODNN7EXAMPLF"} {
				if strings.Contains(r.stderr+r.stdout, secret) {
					t.Errorf("secret echoed: %s", r.stderr)
				}
			}
			if got := readString(t, spool); got != before {
				t.Errorf("a refused letter was written:\n%s", got)
			}
		})
	}
}

func TestMailboxDistributeSweepList(t *testing.T) {
	e := newEnv(t)
	missing := filepath.Join(filepath.Dir(e.dir), "gone")
	first := e.jsonOf("mailbox", "file", "--class", "tool_error", "--what", "about this repo", "--repo", "github.com/acme/widgets")["id"].(string)
	e.ok("mailbox", "file", "--class", "note", "--what", "about no project")
	e.ok("mailbox", "file", "--class", "note", "--what", "about a repo not here", "--repo", missing)
	e.ok("mailbox", "file", "--class", "reply", "--kind", "triage", "--what", "fixed", "--answers", first, "--repo", ".")

	d := e.jsonOf("mailbox", "distribute")
	if d["delivered"] != 3.0 || len(d["pending"].([]any)) != 1 || !strings.HasSuffix(d["registered"].(string), ".palace/inbox.jsonl") {
		t.Fatalf("first distribute: %v", d)
	}
	pending := d["pending"].([]any)[0].(map[string]any)
	if pending["repo"] != missing || !strings.Contains(pending["reason"].(string), "does not exist") {
		t.Errorf("pending %v", pending)
	}
	box := readString(t, filepath.Join(e.dir, ".palace", "inbox.jsonl"))
	global := readString(t, filepath.Join(e.home, "inbox.jsonl"))
	if strings.Count(box, "\n") != 2 || strings.Count(global, "\n") != 1 || strings.Contains(global, `"repo"`) {
		t.Errorf("box:\n%s\nglobal:\n%s", box, global)
	}

	// Idempotent: the second run appends nothing.
	d = e.jsonOf("mailbox", "distribute")
	if d["delivered"] != 0.0 || d["already_present"] != 3.0 {
		t.Errorf("second distribute: %v", d)
	}
	if readString(t, filepath.Join(e.dir, ".palace", "inbox.jsonl")) != box || readString(t, filepath.Join(e.home, "inbox.jsonl")) != global {
		t.Error("second distribute changed a box")
	}

	// Sweep: each letter once, with every place it was seen.
	sw := e.jsonOf("mailbox", "sweep")
	letters := sw["letters"].([]any)
	ids := map[string]bool{}
	for _, l := range letters {
		m := l.(map[string]any)
		if ids[m["id"].(string)] {
			t.Errorf("letter %s swept twice", m["id"])
		}
		ids[m["id"].(string)] = true
	}
	counts := sw["counts"].(map[string]any)
	if len(letters) != 4 || counts["fired_clay"] != 2.0 || counts["open"] != 2.0 {
		t.Errorf("sweep: %d letters, counts %v", len(letters), counts)
	}
	for _, l := range letters {
		m := l.(map[string]any)
		if m["id"] == first && len(m["sources"].([]any)) != 2 {
			t.Errorf("letter seen in spool and box has sources %v", m["sources"])
		}
	}
	text := e.ok("mailbox", "sweep")
	for _, want := range []string{"ID            FATE        DATE              AGENT  CLASS       SEEN IN       WHAT",
		first + "  fired_clay  ", "spool,repo", "4 letters · 2 open (2 wet_ink, 0 in_flight) · 2 fired_clay · 0 external"} {
		if !strings.Contains(text, want) {
			t.Errorf("sweep text lacks %q:\n%s", want, text)
		}
	}

	// List one box, open letters only: the counts still cover the box.
	l := e.jsonOf("mailbox", "list", "--box", ".palace/inbox.jsonl", "--open")
	if len(l["letters"].([]any)) != 0 || l["counts"].(map[string]any)["total"] != 2.0 {
		t.Errorf("list --open: %v", l)
	}
	wantCode(t, e.run("mailbox", "list", "--box", "nope.jsonl"), 2, "nope.jsonl", "no such file")
}

func TestMailboxCheckInputs(t *testing.T) {
	e := newEnv(t)
	ok := letterLine("fine", "")
	long := append([]byte(`{"ts":"2025-06-01T12:00:00Z","agent":"a","class":"c","what":"`), bytes.Repeat([]byte("x"), 10<<20)...)
	long = append(long, "\"}\n"...)
	tests := []struct {
		name    string
		content []byte
		code    int
		stdout  string
	}{
		{"empty file", nil, 0, ""},
		{"clean", []byte(ok + "\n"), 0, ""},
		{"BOM", []byte("\xEF\xBB\xBF" + ok + "\n"), 0,
			"box.jsonl:1:1: PM011 warning: byte-order mark at start of file; boxes are plain UTF-8 (the mark is ignored)\n"},
		{"CRLF", []byte(ok + "\r\n" + letterLine("two", "") + "\r\n"), 0,
			"box.jsonl:1:82: PM012 warning: line ends with CRLF (2 such lines in this file); boxes use LF (the \\r is ignored, ids are unchanged)\n"},
		{"invalid UTF-8", []byte(ok + "\n" + `{"ts":"2025-06-01T12:00:00Z","agent":"a","class":"c","what":"caf` + "\xe9" + `"}` + "\n"), 1,
			"box.jsonl:2:65: PM009 invalid UTF-8 at byte 65; letters are UTF-8 JSON\n"},
		{"10 MB line", long, 1,
			"box.jsonl:1:65537: PM010 line is 10485823 bytes, over the 65536-byte limit; a letter is a report, not an attachment\n"},
		{"no final newline", []byte(ok), 0,
			"box.jsonl:1:82: PM015 warning: no newline at end of file (palace adds one before appending)\n"},
		{"secret", []byte(letterLine("key AKIAIOSFODNN7EXAMPLF", "") + "\n"), 1,
			"box.jsonl:1:80: PM003 secret (aws-access-key-id): AKIA************MPLF; remove it, or mark a deliberate fixture with palace:allow-secret\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.writeFile("box.jsonl", tt.content)
			r := e.run("mailbox", "check", "box.jsonl")
			wantCode(t, r, tt.code)
			if r.stdout != tt.stdout {
				t.Errorf("stdout:\n%s\nwant:\n%s", r.stdout, tt.stdout)
			}
		})
	}
}

func TestMailboxCheckOutput(t *testing.T) {
	e := newEnv(t)
	e.writeFile(".palace/inbox.jsonl", []byte(letterLine("one", "")+"\n<<<<<<< HEAD\n"+letterLine("one", "")+"\n"+
		letterLine("answers", `"answers":["000000000000"]`)+"\n"))
	r := e.run("mailbox", "check")
	wantCode(t, r, 1)
	want := `.palace/inbox.jsonl:2:1: PM004 merge conflict marker; resolve the conflict by keeping both sides' letters (` + "`.palace/inbox.jsonl merge=union`" + ` in .gitattributes avoids these)
.palace/inbox.jsonl:3:1: PM005 duplicate of line 1 (letter ` + mailbox.ID([]byte(letterLine("one", ""))) + `); each letter appears once in a box
.palace/inbox.jsonl:4:85: PM007 warning: "answers[0]" names letter 000000000000, which is not in this box
`
	if r.stdout != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", r.stdout, want)
	}
	if r.stderr != "palace mailbox check: 2 errors, 1 warning in 1 box\n" {
		t.Errorf("stderr %q", r.stderr)
	}

	r = e.run("mailbox", "check", "--format", "json")
	wantCode(t, r, 1)
	var rep struct {
		Checked  []string         `json:"checked"`
		Findings []map[string]any `json:"findings"`
		Errors   int              `json:"errors"`
		Warnings int              `json:"warnings"`
		Policy   any              `json:"policy"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	f := rep.Findings[2]
	if rep.Errors != 2 || rep.Warnings != 1 || rep.Policy != nil || f["code"] != "PM007" || f["severity"] != "warning" || f["col"] != 85.0 || f["letter_id"] == nil {
		t.Errorf("json report %+v", rep)
	}

	// Warnings alone pass; unreadable input is a usage problem.
	e.writeFile(".palace/inbox.jsonl", []byte(letterLine("answers", `"answers":["000000000000"]`)+"\n"))
	wantCode(t, e.run("mailbox", "check"), 0)
	wantCode(t, e.run("mailbox", "check", "missing.jsonl"), 2, "read box missing.jsonl", "no such file")
	wantCode(t, e.run("mailbox", "check", "--staged", ".palace/inbox.jsonl"), 2, "not in the index")
	// The hook never creates a palace home.
	if _, err := os.Stat(e.home); !os.IsNotExist(err) {
		t.Errorf("check created %s: %v", e.home, err)
	}
}

func TestMailboxCheckTeamPolicy(t *testing.T) {
	e := newEnv(t)
	e.writeFile(".palace/policies/mailbox.rego", []byte(`package palace.mailbox

import rego.v1

deny contains "PM120: tool_error letters must name the tool" if {
	input.letter.class == "tool_error"
	not input.letter.tool
}
`))
	e.writeFile(".palace/inbox.jsonl", []byte(letterLine("named", `"tool":"bash"`)+"\n"+letterLine("unnamed", "")+"\n"))
	r := e.run("mailbox", "check", ".palace/inbox.jsonl")
	wantCode(t, r, 1)
	if r.stdout != ".palace/inbox.jsonl:2:1: PM120 tool_error letters must name the tool\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	e.writeFile(".palace/policies/mailbox.rego", []byte("package palace.mailbox\n\ndeny contains x if {\n"))
	r = e.run("mailbox", "check", ".palace/inbox.jsonl")
	wantCode(t, r, 1)
	if !strings.Contains(r.stdout, ".palace/inbox.jsonl:1:1: PM101 palace.mailbox policy failed: the policy set does not load: ") ||
		strings.Count(r.stdout, "\n") != 2 {
		t.Errorf("broken policy must refuse every letter, one line each:\n%s", r.stdout)
	}
}

func TestMailboxCodes(t *testing.T) {
	e := newEnv(t)
	out := e.ok("mailbox", "codes")
	if !strings.HasPrefix(out, "CODE   SEVERITY  MEANING\nPM001  error     line is not one JSON object\n") || !strings.Contains(out, "PM101") {
		t.Errorf("codes:\n%s", out)
	}
}
