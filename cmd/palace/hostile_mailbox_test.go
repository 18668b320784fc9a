package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A cloned repository's .palace/ is untrusted, and the spool is written by
// many hands: each case sets up a real checkout, runs the built binary and
// states the exit code and the message.
func TestHostileMailbox(t *testing.T) {
	type step struct {
		args []string
		code int
		// stderr and stdout must contain these.
		stderr, stdout []string
	}
	for _, c := range []struct {
		name string
		// setup prepares e (e.dir is the checkout) and returns the steps.
		setup func(t *testing.T, e *env, outside string) []step
		// after checks the files.
		after func(t *testing.T, e *env, outside string)
	}{
		{
			name: "inbox.jsonl is a link to a file outside",
			setup: func(t *testing.T, e *env, outside string) []step {
				box := filepath.Join(e.dir, ".palace", "inbox.jsonl")
				mustSymlink(t, filepath.Join(outside, "victim"), box)
				return []step{
					{args: []string{"mailbox", "file", "--class", "note", "--what", "about this repo", "--repo", "."}},
					{args: []string{"mailbox", "distribute"}, code: 2,
						stderr: []string{"refused box " + box, box + " -> " + filepath.Join(outside, "victim") + " is a symbolic link", "rm " + box},
						stdout: []string{"delivered 0 letters", "1 pending"}},
					// Sweep names the link instead of reading through it.
					{args: []string{"mailbox", "sweep"}, stdout: []string{"unreachable " + box, "is a symbolic link"}},
					// So does check: the file outside is not fed into findings.
					{args: []string{"mailbox", "check"}, code: 2, stderr: []string{"read box .palace/inbox.jsonl: " + box + " -> ", "rm " + box}},
				}
			},
			after: func(t *testing.T, e *env, outside string) {
				if got := readString(t, filepath.Join(outside, "victim")); got != "precious\n" {
					t.Errorf("the link's target was written: %q", got)
				}
			},
		},
		{
			name: ".palace is a link to a directory outside",
			setup: func(t *testing.T, e *env, outside string) []step {
				link := filepath.Join(e.dir, ".palace")
				mustSymlink(t, outside, link)
				return []step{
					{args: []string{"mailbox", "file", "--class", "note", "--what", "about this repo", "--repo", "."}},
					{args: []string{"mailbox", "distribute", "--format", "json"}, code: 2,
						stderr: []string{link + " -> " + outside + " is a symbolic link", "rm " + link},
						stdout: []string{`"refused": [`}},
				}
			},
			after: func(t *testing.T, e *env, outside string) {
				if ents, _ := os.ReadDir(outside); len(ents) != 1 {
					t.Errorf("a box was created through the link: %d entries in the target", len(ents))
				}
			},
		},
		{
			name: "spool ends in an unterminated line",
			setup: func(t *testing.T, e *env, outside string) []step {
				if err := os.MkdirAll(e.home, 0o700); err != nil {
					t.Fatal(err)
				}
				spool := filepath.Join(e.home, "field-reports.jsonl")
				before := letterLine("filed before the crash", "") + "\n" + `{"ts":"2025-06-01T12:00:00Z","agent":"cl`
				if err := os.WriteFile(spool, []byte(before), 0o600); err != nil {
					t.Fatal(err)
				}
				return []step{
					{args: []string{"mailbox", "file", "--class", "note", "--what", "filed after the crash"},
						stderr: []string{"line 2 of the spool had no final newline; it was kept as it is", "palace mailbox check " + spool},
						stdout: []string{"filed "}},
					{args: []string{"mailbox", "sweep"},
						stdout: []string{"filed before the crash", "filed after the crash", "2 letters"},
						stderr: []string{"1 line is not a letter and was skipped"}},
					{args: []string{"mailbox", "distribute"}, stdout: []string{"delivered 2 letters"}},
					{args: []string{"mailbox", "check", spool}, code: 1, stdout: []string{spool + ":2:41: PM001 invalid JSON: unexpected end of JSON input"}},
				}
			},
			after: func(t *testing.T, e *env, outside string) {
				global := readString(t, filepath.Join(e.home, "inbox.jsonl"))
				if !strings.Contains(global, "filed before the crash") || !strings.Contains(global, "filed after the crash") {
					t.Errorf("global box = %q", global)
				}
			},
		},
		{
			name: "letters about all or no project reach the global box",
			setup: func(t *testing.T, e *env, outside string) []step {
				var steps []step
				for _, repo := range []string{"all", "(research task, no repo)", "n/a"} {
					steps = append(steps, step{args: []string{"mailbox", "file", "--class", "note", "--what", "about " + repo, "--repo", repo},
						stdout: []string{"delivers it to the global box"}})
				}
				return append(steps,
					step{args: []string{"mailbox", "file", "--class", "note", "--what", "about palace", "--repo", "palace"},
						stdout: []string{"delivers it to the box of palace"}},
					step{args: []string{"mailbox", "distribute"},
						stdout: []string{"delivered 3 letters", "1 pending", `"palace" is a relative path`}},
					step{args: []string{"mailbox", "check", filepath.Join(e.home, "inbox.jsonl")}},
				)
			},
			after: func(t *testing.T, e *env, outside string) {
				global := readString(t, filepath.Join(e.home, "inbox.jsonl"))
				if strings.Count(global, "\n") != 3 || strings.Contains(global, "about palace") {
					t.Errorf("global box = %q, want the three projectless letters only", global)
				}
				if _, err := os.Stat(filepath.Join(e.dir, ".palace", "inbox.jsonl")); !os.IsNotExist(err) {
					t.Errorf("the checkout's box was written (%v)", err)
				}
			},
		},
		{
			name: ".palace is a link: policy fmt does not rewrite the target",
			setup: func(t *testing.T, e *env, outside string) []step {
				writeUnformatted(t, filepath.Join(outside, "policies", "mailbox.rego"))
				link := filepath.Join(e.dir, ".palace")
				mustSymlink(t, outside, link)
				return []step{{args: []string{"policy", "fmt"}, code: 2,
					stderr: []string{link + " -> " + outside + " is a symbolic link", "rm " + link}}}
			},
			after: func(t *testing.T, e *env, outside string) {
				if got := readString(t, filepath.Join(outside, "policies", "mailbox.rego")); got != unformattedRego {
					t.Errorf("the target was rewritten: %q", got)
				}
			},
		},
		{
			name: "a policy file is a link: policy fmt does not replace it",
			setup: func(t *testing.T, e *env, outside string) []step {
				writeUnformatted(t, filepath.Join(outside, "mailbox.rego"))
				link := filepath.Join(e.dir, ".palace", "policies", "mailbox.rego")
				mustSymlink(t, filepath.Join(outside, "mailbox.rego"), link)
				return []step{{args: []string{"policy", "fmt"}, code: 2,
					stderr: []string{link + " -> " + filepath.Join(outside, "mailbox.rego") + " is a symbolic link"}}}
			},
			after: func(t *testing.T, e *env, outside string) {
				link := filepath.Join(e.dir, ".palace", "policies", "mailbox.rego")
				if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
					t.Errorf("the link was replaced (%v)", err)
				}
				if got := readString(t, filepath.Join(outside, "mailbox.rego")); got != unformattedRego {
					t.Errorf("the target was rewritten: %q", got)
				}
			},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			outside := filepath.Join(filepath.Dir(e.dir), "outside")
			if err := os.MkdirAll(outside, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(outside, "victim"), []byte("precious\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, s := range c.setup(t, e, outside) {
				r := e.run(s.args...)
				if r.code != s.code {
					t.Fatalf("palace %v: exit %d, want %d\nstdout: %s\nstderr: %s", s.args, r.code, s.code, r.stdout, r.stderr)
				}
				for _, want := range s.stderr {
					if !strings.Contains(r.stderr, want) {
						t.Errorf("palace %v: stderr lacks %q:\n%s", s.args, want, r.stderr)
					}
				}
				for _, want := range s.stdout {
					if !strings.Contains(r.stdout, want) {
						t.Errorf("palace %v: stdout lacks %q:\n%s", s.args, want, r.stdout)
					}
				}
				if strings.Contains(strings.Join(s.args, " "), "--format json") && !json.Valid([]byte(r.stdout)) {
					t.Errorf("palace %v: stdout is not JSON: %s", s.args, r.stdout)
				}
			}
			c.after(t, e, outside)
		})
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

const unformattedRego = "package palace.mailbox\nimport rego.v1\ndeny contains \"x\" if {   input.box == \"y\" }\n"

func writeUnformatted(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(unformattedRego), 0o644); err != nil {
		t.Fatal(err)
	}
}
