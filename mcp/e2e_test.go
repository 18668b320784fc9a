package mcp_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestNodeClientEndToEnd runs e2e/run.mjs: the official MCP TypeScript
// SDK's stdio client against the real palace binary. It needs node (20 or
// later) and, the first time, npm with access to the registry to install
// e2e/node_modules from package-lock.json (`npm ci`).
func TestNodeClientEndToEnd(t *testing.T) {
	runNodeScript(t, "run.mjs")
}

// TestSchemasStrict runs e2e/schemas.mjs: every tool's input and output
// schema, in both modes, must compile under ajv's strict mode (JSON Schema
// 2020-12), and a call of every tool whose arguments follow its input schema
// must succeed with structuredContent its output schema accepts.
func TestSchemasStrict(t *testing.T) {
	runNodeScript(t, "schemas.mjs")
}

// runNodeScript runs a node:test script of e2e/ against a freshly built
// palace and fails with its output when a test in it fails.
func runNodeScript(t *testing.T, script string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("%s (Node MCP clients) skipped in -short mode", script)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the end-to-end tests with the official MCP TypeScript SDK client need Node.js 20 or later (CI installs it)")
	}
	dir := e2eModules(t)
	bin := buildPalace(t)
	cmd := exec.Command(node, script, bin)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("node e2e/%s: %v\n%s", script, err, out.String())
	}
	// Keep the verdict lines in the test log.
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(l, "ok ") || strings.HasPrefix(l, "# pass") || strings.HasPrefix(l, "# fail") {
			t.Log(l)
		}
	}
}

var e2eInstall struct {
	sync.Mutex
	done bool
}

// e2eModules returns the absolute path of mcp/e2e with its node_modules
// installed from package-lock.json, running `npm ci` the first time. A
// machine without npm, or whose npm cannot reach the registry, skips the
// test with a message: that says nothing about palace.
func e2eModules(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("e2e")
	if err != nil {
		t.Fatal(err)
	}
	e2eInstall.Lock()
	defer e2eInstall.Unlock()
	if e2eInstall.done {
		return dir
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "inspector", "package.json")); err == nil {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "ajv-formats", "package.json")); err == nil {
			e2eInstall.done = true
			return dir
		}
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("mcp/e2e/node_modules is missing and npm is not installed: run `npm ci` in mcp/e2e (CI does)")
	}
	cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		if unreachable(string(out)) {
			t.Skipf("npm ci in mcp/e2e could not reach the npm registry, so the MCP client tests cannot run here:\n%s", lastLines(string(out), 5))
		}
		t.Fatalf("npm ci in mcp/e2e: %v\n%s", err, out)
	}
	e2eInstall.done = true
	return dir
}

// unreachable says whether npm's output is a network failure rather than a
// broken package-lock.json or a failed build.
func unreachable(out string) bool {
	for _, code := range []string{"ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ENETUNREACH", "EHOSTUNREACH", "network request", "npm error network"} {
		if strings.Contains(out, code) {
			return true
		}
	}
	return false
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// TestMain removes the binary buildPalace built.
func TestMain(m *testing.M) {
	code := m.Run()
	if palaceBuild.bin != "" {
		os.RemoveAll(filepath.Dir(palaceBuild.bin))
	}
	os.Exit(code)
}

var palaceBuild struct {
	sync.Mutex
	bin string
}

// buildPalace builds the palace binary once for the package's tests.
func buildPalace(t *testing.T) string {
	t.Helper()
	palaceBuild.Lock()
	defer palaceBuild.Unlock()
	if palaceBuild.bin != "" {
		return palaceBuild.bin
	}
	dir, err := os.MkdirTemp("", "palace-mcp-bin-")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "palace")
	build := exec.Command("go", "build", "-o", bin, "github.com/palacehq/palace/cmd/palace")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build palace: %v\n%s", err, out)
	}
	palaceBuild.bin = bin
	return bin
}
