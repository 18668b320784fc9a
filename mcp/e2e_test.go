package mcp_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNodeClientEndToEnd runs e2e/run.mjs: the official MCP TypeScript
// SDK's stdio client against the real palace binary. It needs node (20 or
// later) and, the first time, npm with access to the registry to install
// e2e/node_modules from package-lock.json (`npm ci`).
func TestNodeClientEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test with the Node MCP client skipped in -short mode")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the end-to-end test with the official MCP TypeScript SDK client needs Node.js 20 or later (CI installs it)")
	}
	dir, err := filepath.Abs("e2e")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		npm, err := exec.LookPath("npm")
		if err != nil {
			t.Fatalf("mcp/e2e/node_modules is missing and npm is not installed: run `npm ci --prefix mcp/e2e`")
		}
		cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in mcp/e2e: %v\n%s", err, out)
		}
	}
	bin := filepath.Join(t.TempDir(), "palace")
	build := exec.Command("go", "build", "-o", bin, "github.com/palacehq/palace/cmd/palace")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build palace: %v\n%s", err, out)
	}
	cmd := exec.Command(node, "run.mjs", bin)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	if err != nil {
		t.Fatalf("node e2e/run.mjs: %v\n%s", err, out.String())
	}
	// Keep the verdict lines in the test log.
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(l, "ok ") || strings.HasPrefix(l, "# pass") || strings.HasPrefix(l, "# fail") {
			t.Log(l)
		}
	}
}
