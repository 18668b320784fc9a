package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestVSCodeEndToEnd runs the packaged extension in a real VS Code
// (code-server from npm) driven by headless Chromium
// (examples/editors/vscode/e2e/run.mjs) against the real `palace lsp`: the
// code lens, an inlay hint, the hover, a diagnostic in the Problems panel
// and the Show Context Pack command must all show what the palace holds.
// Screenshots go to $PALACE_SCREENSHOTS when set, else the test's folder.
// E2E_SETTINGS='{"palace.hints.hover": false, "palace.hints.codeLens": false}'
// turns the hover and the lens off: the test must then fail.
func TestVSCodeEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("VS Code end-to-end test skipped in -short mode")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the VS Code test runs code-server on Node.js 20 (CI installs it)")
	}
	chromium, err := exec.LookPath("chromium-headless-shell")
	if err != nil {
		t.Skip("chromium-headless-shell is not installed (Debian: apt-get install -y chromium-headless-shell; CI installs it)")
	}
	_, self, _, _ := runtime.Caller(0)
	ext := filepath.Join(filepath.Dir(self), "..", "..", "examples", "editors", "vscode")
	e2e := filepath.Join(ext, "e2e")
	if _, err := os.Stat(filepath.Join(e2e, "node_modules", ".palace-e2e-ready")); err != nil {
		t.Skip("code-server is not installed: run examples/editors/vscode/e2e/install.sh (CI does)")
	}
	if _, err := os.Stat(filepath.Join(ext, "node_modules", "@vscode", "vsce")); err != nil {
		t.Skip("the extension's node_modules are missing: run npm ci in examples/editors/vscode (CI does)")
	}

	// The extension as users install it: compiled and packaged.
	vsix := filepath.Join(t.TempDir(), "palace.vsix")
	for _, args := range [][]string{{"npm", "run", "compile"}, {"npx", "--no-install", "vsce", "package", "--out", vsix}} {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = ext
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}

	e, qi, dao := seedLSP(t)
	// A dao card whose trigger matches: an Information diagnostic, which
	// VS Code lists in Problems (qi and shu matches are Hints).
	ev1 := e.record("a bare return err lost the failing path in production")
	ev2 := e.record("wrapped errors named the query that failed")
	ev3 := e.record("the incident report read the wrapped error")
	wrap := e.distill("Wrap every returned error with its context", "dao_ren", "--supporting", ev1+","+ev2,
		"--scope-path", "**/*.go", "--trigger-pattern", `return nil, err`)
	e.ok("promote", wrap, "--reason", "team rule", "--verification", ev3)
	if err := os.MkdirAll(filepath.Join(e.dir, ".palace"), 0o755); err != nil {
		t.Fatal(err)
	}
	shots := os.Getenv("PALACE_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	expect, _ := json.Marshal(map[string]any{
		"lens":        "palace · dao 2 · shu 0 · qi 1",
		"inlay":       "‹qi› Open SQLite in WAL mode",
		"hover":       []string{"triggered here", "Open SQLite in WAL mode — promoted", qi, "applies to db/open.go", "Migrations are forward-only"},
		"diagnostic":  "Wrap every returned error with its context",
		"contextCard": dao,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "run.mjs")
	cmd.Dir = e2e
	cmd.Env = append(filteredEnv(), "PALACE_BIN="+palaceBin, "PALACE_HOME="+e.home, "USER=tester",
		"E2E_WORKSPACE="+e.dir, "E2E_VSIX="+vsix, "E2E_CHROMIUM="+chromium, "E2E_OUT="+shots, "E2E_EXPECT="+string(expect), "E2E_SETTINGS="+os.Getenv("E2E_SETTINGS"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		log, _ := os.ReadFile(filepath.Join(shots, "code-server.log"))
		t.Fatalf("the extension in VS Code: %v\n%s\ncode-server log:\n%s\nscreenshots in %s", err, out.String(), lastLines(string(log), 40), shots)
	}
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(l, "ok ") || strings.HasPrefix(l, "# pass") {
			t.Log(l)
		}
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
