package mcp_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/mailbox"
	"github.com/palacehq/palace/mcp"
)

func spoolLines(t *testing.T, home string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(home, mailbox.SpoolFile))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines
}

func TestMailboxFile(t *testing.T) {
	e := newPalaceEnv(t)
	s := connect(t, e.open(t, host.Agent))
	got := s.ok(mcp.ToolMailboxFile, map[string]any{"class": "tool_error", "what": "make lint needs staticcheck on PATH", "repo": "github.com/acme/widgets",
		"tool": "make lint", "expected": "make lint installs its tools", "external": "https://example.com/issues/7"})
	lines := spoolLines(t, e.home)
	if len(lines) != 1 {
		t.Fatalf("spool has %d lines, want 1", len(lines))
	}
	if got["id"] != mailbox.ID([]byte(lines[0])) {
		t.Errorf("returned id %v is not the id of the line written (%s)", got["id"], mailbox.ID([]byte(lines[0])))
	}
	var l map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &l); err != nil {
		t.Fatal(err)
	}
	if l["agent"] != "tester" || l["ts"] != "2026-03-01T12:00:00.000Z" || l["external"] != "https://example.com/issues/7" || l["repo"] != "github.com/acme/widgets" {
		t.Errorf("letter written: %v", l)
	}

	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"missing class", map[string]any{"what": "x"}, `palace: letter: missing required field "class"`},
		{"bad answer id", map[string]any{"class": "reply", "what": "x", "answers": []string{"nope"}}, `palace: letter: "answers[0]" is not a letter id (12 lowercase hex characters): "nope"`},
		{"a secret", map[string]any{"class": "tool_error", "what": "login failed", "snippet": "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}, "palace: letter refused, it contains a secret: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := s.on(t).fail(mcp.ToolMailboxFile, tc.args); !strings.HasPrefix(got, tc.want) {
				t.Errorf("\n got %q\nwant %q…", got, tc.want)
			}
			if strings.Contains(s.on(t).fail(mcp.ToolMailboxFile, tc.args), "wJalrXUtnFEMI/K7MDENG") {
				t.Error("the refusal echoes the secret")
			}
		})
	}
	if n := len(spoolLines(t, e.home)); n != 1 {
		t.Errorf("refused letters were written: the spool has %d lines", n)
	}
	// A relative repo is resolved from the server's workspace, as the CLI
	// does, since distribute cannot resolve it later.
	s.ok(mcp.ToolMailboxFile, map[string]any{"class": "doc_gap", "what": "README lacks the test command", "repo": "."})
	lines = spoolLines(t, e.home)
	if len(lines) != 2 || !strings.Contains(lines[1], `"repo":`+strconvQuote(e.dir)) {
		t.Errorf("relative repo not resolved to %s: %v", e.dir, lines)
	}
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }
