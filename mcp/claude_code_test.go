package mcp_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeMCPJSONInClaudeCode puts the .mcp.json of mcp/README.md,
// verbatim, into a project and asks the real Claude Code (`claude mcp
// list`, which starts and initializes each server) to connect. The palace
// on PATH is a wrapper that notes the PALACE_HOME the server was started
// with: it must be the user's, as set in Claude Code's environment, and with
// none set, none (palace's default ~/.palace). A project whose env holds a
// nested default Claude Code cannot expand must fail to connect, not serve
// an empty palace.
func TestReadmeMCPJSONInClaudeCode(t *testing.T) {
	if testing.Short() {
		t.Skip("Claude Code test skipped in -short mode")
	}
	claude, err := exec.LookPath("claude")
	if err != nil {
		t.Skip("claude is not installed: the .mcp.json test needs Claude Code (npm install -g @anthropic-ai/claude-code; CI installs it)")
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	var config string
	for _, m := range regexp.MustCompile("(?s)```json\n(.*?)```").FindAllStringSubmatch(string(readme), -1) {
		if strings.Contains(m[1], `"claude-code"`) {
			config = m[1]
		}
	}
	if config == "" {
		t.Fatal("mcp/README.md has no .mcp.json block for Claude Code")
	}
	real := buildPalace(t)
	root := t.TempDir()
	binDir, proj, userHome, log := filepath.Join(root, "bin"), filepath.Join(root, "proj"), filepath.Join(root, "user"), filepath.Join(root, "seen.log")
	for _, d := range []string{binDir, filepath.Join(proj, ".claude"), userHome} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	wrapper := "#!/bin/sh\nprintf 'PALACE_HOME=[%s]\\n' \"$PALACE_HOME\" >> " + log + "\nexec " + real + " \"$@\"\n"
	write := func(path, content string, mode os.FileMode) {
		t.Helper()
		if err := os.WriteFile(path, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(binDir, "palace"), wrapper, 0o755)
	// The one approval a user gives a project's .mcp.json once.
	write(filepath.Join(proj, ".claude", "settings.local.json"), `{"enableAllProjectMcpServers": true}`, 0o644)
	if out, err := exec.Command("git", "init", "-q", proj).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	list := func(config string, env ...string) (string, string) {
		t.Helper()
		write(filepath.Join(proj, ".mcp.json"), config, 0o644)
		os.Remove(log)
		cmd := exec.Command(claude, "mcp", "list")
		cmd.Dir = proj
		// A placeholder key: listing servers never reaches the API.
		cmd.Env = append(filteredEnv(), "HOME="+userHome, "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"),
			"ANTHROPIC_API_KEY=sk-ant-placeholder", "DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
		cmd.Env = append(cmd.Env, env...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Logf("claude mcp list: %v", err)
		}
		seen, _ := os.ReadFile(log)
		return out.String(), string(seen)
	}
	mine := filepath.Join(root, "my-palace")
	out, seen := list(config, "PALACE_HOME="+mine)
	if !strings.Contains(out, "Connected") || !strings.Contains(seen, "PALACE_HOME=["+mine+"]") {
		t.Errorf("README .mcp.json with PALACE_HOME=%s: server saw %q\n%s", mine, seen, out)
	}
	out, seen = list(config)
	if !strings.Contains(out, "Connected") || !strings.Contains(seen, "PALACE_HOME=[]") {
		t.Errorf("README .mcp.json without PALACE_HOME: server saw %q\n%s", seen, out)
	}
	nested := strings.Replace(config, `"env": {`, `"env": { "PALACE_HOME": "${PALACE_HOME:-${HOME}/.palace}",`, 1)
	if out, _ = list(nested); strings.Contains(out, "Connected") || !strings.Contains(out, "palace") {
		t.Errorf("a nested default in env connected (palace must refuse the literal home):\n%s", out)
	}
}

func filteredEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PALACE_") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "PATH=") {
			out = append(out, kv)
		}
	}
	return out
}
