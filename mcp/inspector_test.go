package mcp_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestInspectorCLI drives the real binary with the MCP Inspector's CLI
// (`npx @modelcontextprotocol/inspector --cli`, pinned in
// e2e/package.json), a client that builds arguments from the tool schemas:
// tools/list, tools/call with list and integer arguments, resources/list,
// resources/read of a card and prompts/get must all succeed, and its
// --strict check of the tool schemas' portability must find nothing in
// either mode.
func TestInspectorCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("MCP Inspector end-to-end test skipped in -short mode")
	}
	npx, err := exec.LookPath("npx")
	if err != nil {
		t.Skip("npx is not installed: the MCP Inspector test needs Node.js and npm (CI installs them)")
	}
	dir := e2eModules(t)
	e := newPalaceEnv(t)
	bin := buildPalace(t)
	palace := func(args ...string) map[string]any {
		t.Helper()
		cmd := exec.Command(bin, append(args, "--format", "json")...)
		cmd.Dir = e.dir
		cmd.Env = append(os.Environ(), "PALACE_HOME="+e.home, "PALACE_MODE=")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("palace %v: %v", args, err)
		}
		var v map[string]any
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("palace %v: %v\n%s", args, err, out)
		}
		return v
	}
	seen := palace("record", "--content", "without WAL: database is locked")["id"].(string)
	fixed := palace("record", "--content", "with WAL: 50 of 50 runs pass")["id"].(string)
	card := palace("distill", "--statement", "Open SQLite in WAL mode", "--tier", "qi", "--supporting", seen)["id"].(string)
	palace("promote", card, "--reason", "verified", "--verification", fixed)

	inspect := func(args ...string) map[string]any {
		t.Helper()
		full := append([]string{"--no-install", "@modelcontextprotocol/inspector", "--cli", "-e", "PALACE_HOME=" + e.home,
			bin, "--cwd", e.dir, "mcp"}, args...)
		cmd := exec.Command(npx, full...)
		cmd.Dir = dir
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("inspector %v: %v\n%s%s", args, err, stdout.String(), stderr.String())
		}
		var v map[string]any
		if err := json.Unmarshal(stdout.Bytes(), &v); err != nil {
			t.Fatalf("inspector %v: %v\n%s", args, err, stdout.String())
		}
		if v["isError"] == true {
			t.Fatalf("inspector %v: tool error %v", args, v["content"])
		}
		return v
	}
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }

	for _, mode := range []string{"agent", "human"} {
		cmd := exec.Command(npx, "--no-install", "@modelcontextprotocol/inspector", "--cli", "-e", "PALACE_HOME="+e.home,
			bin, "--cwd", e.dir, "mcp", "--mode", mode, "--method", "tools/list", "--strict")
		cmd.Dir = dir
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Errorf("inspector --strict tools/list in %s mode: %v\n%s", mode, err, lastLines(stderr.String(), 40))
			continue
		}
		// Warnings too: a type array or a bare true is legal JSON Schema
		// that some clients drop or refuse.
		if s := stderr.String(); strings.Contains(s, "Error:") || strings.Contains(s, "Warning:") {
			t.Errorf("inspector --strict tools/list in %s mode reports problems:\n%s", mode, lastLines(s, 40))
		}
	}

	if tools := js(inspect("--method", "tools/list")); !strings.Contains(tools, `"palace_context"`) || !strings.Contains(tools, `"palace_cards"`) {
		t.Fatalf("tools/list: %.500s", tools)
	}
	// Integer and list arguments as the Inspector's CLI sends them.
	if got := js(inspect("--method", "tools/call", "--tool-name", "palace_cards", "--tool-arg", "action=list", "--tool-arg", "limit=1")); !strings.Contains(got, card) {
		t.Errorf("palace_cards limit=1: %.500s", got)
	}
	rec := inspect("--method", "tools/call", "--tool-name", "palace_record", "--tool-arg", "content=seen from the inspector",
		"--tool-arg", `tags=["inspector","e2e"]`)
	if got := js(rec["structuredContent"]); !strings.Contains(got, `"tags":["inspector","e2e"]`) {
		t.Errorf("palace_record with tags: %.500s", got)
	}
	if got := js(inspect("--method", "resources/list")); !strings.Contains(got, "palace://card/"+card) || !strings.Contains(got, "palace://cards/authoritative") {
		t.Errorf("resources/list: %.500s", got)
	}
	if got := js(inspect("--method", "resources/read", "--uri", "palace://card/"+card)); !strings.Contains(got, "Open SQLite in WAL mode") {
		t.Errorf("resources/read: %.500s", got)
	}
	if got := js(inspect("--method", "prompts/get", "--prompt-name", "context-pack", "--prompt-args", "task=sqlite locking")); !strings.Contains(got, card) {
		t.Errorf("prompts/get context-pack: %.500s", got)
	}
}
