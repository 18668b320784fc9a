package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	palacemcp "github.com/palacehq/palace/mcp"
)

// mcpSession starts the real binary as `palace mcp args…` in e and
// connects the go-sdk client to it over stdio.
func (e *env) mcpSession(t *testing.T, extraEnv []string, args ...string) *sdk.ClientSession {
	t.Helper()
	cmd := exec.Command(palaceBin, append([]string{"mcp"}, args...)...)
	cmd.Dir = e.dir
	cmd.Env = append(filteredEnv(), "PALACE_HOME="+e.home, "USER=tester", "NO_COLOR=1")
	cmd.Env = append(cmd.Env, extraEnv...)
	client := sdk.NewClient(&sdk.Implementation{Name: "palace-cli-test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to palace mcp: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func mcpToolNames(t *testing.T, cs *sdk.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

func mcpCall(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func TestMCPModeIsFixedAtStart(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name    string
		env     []string
		args    []string
		promote bool
	}{
		{"agent by default", nil, nil, false},
		{"human by flag", nil, []string{"--mode", "human"}, true},
		{"human by environment", []string{"PALACE_MODE=human"}, nil, true},
		{"PALACE_MODE=agent is never raised", []string{"PALACE_MODE=agent"}, []string{"--mode", "human"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := e.mcpSession(t, tc.env, tc.args...)
			if got := slices.Contains(mcpToolNames(t, cs), "palace_promote"); got != tc.promote {
				t.Errorf("palace_promote listed = %v, want %v", got, tc.promote)
			}
			if tc.promote {
				return
			}
			_, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "palace_promote", Arguments: map[string]any{"id": "kc_x", "reason": "r"}})
			var we *jsonrpc.Error
			if !errors.As(err, &we) || we.Code != -32602 || we.Message != `Tool "palace_promote" not available in agent mode` {
				t.Errorf("palace_promote in agent mode: %v", err)
			}
		})
	}
}

// TestMCPErrorsMatchCLI: a tool error carries what the CLI prints on
// stderr for the same operation, in MCP's words: tools and arguments, never
// commands and flags.
func TestMCPErrorsMatchCLI(t *testing.T) {
	e := newEnv(t)
	seen := e.record("without WAL the tests flake")
	card := e.distill("Open SQLite in WAL mode", "qi", "--supporting", seen)
	human := e.mcpSession(t, nil, "--mode", "human")
	agent := e.mcpSession(t, nil)
	for _, tc := range []struct {
		name string
		cli  []string
		vars []string
		mcp  *sdk.ClientSession
		tool string
		args map[string]any
		code int
	}{
		{"unknown evidence", []string{"distill", "--statement", "s", "--tier", "qi", "--supporting", "ev_nope"}, nil,
			agent, "palace_distill", map[string]any{"statement": "s", "tier": "qi", "supporting": []string{"ev_nope"}}, 2},
		{"empty content", []string{"record", "--content", " "}, nil,
			agent, "palace_record", map[string]any{"content": " "}, 2},
		{"duplicate statement", []string{"distill", "--statement", "open sqlite in WAL mode.", "--tier", "qi", "--supporting", seen}, nil,
			agent, "palace_distill", map[string]any{"statement": "open sqlite in WAL mode.", "tier": "qi", "supporting": []string{seen}}, 2},
		{"gate of an evidence id", []string{"gate", seen}, nil,
			agent, "palace_gate", map[string]any{"id": seen}, 2},
		{"direct write in agent mode", []string{"distill", "--statement", "t", "--tier", "qi", "--supporting", seen, "--direct", "--status", "promoted"}, []string{"PALACE_MODE=agent"},
			agent, "palace_distill", map[string]any{"statement": "t", "tier": "qi", "supporting": []string{seen}, "direct": true, "status": "promoted"}, 3},
		{"denied promote with reasons", []string{"promote", card, "--reason", "r"}, nil,
			human, "palace_promote", map[string]any{"id": card, "reason": "r"}, 1},
		{"demote without counterexample", []string{"demote", card, "--reason", "r"}, nil,
			human, "palace_demote", map[string]any{"id": card, "reason": "r"}, 2},
		{"revoke without a reason", []string{"audit", "action", card, "--action", "revoke"}, nil,
			human, "palace_audit_action", map[string]any{"id": card, "action": "revoke"}, 2},
		{"publish a candidate", []string{"publish", card, "--to", "repo", "--reason", "r"}, nil,
			human, "palace_publish", map[string]any{"id": card, "to": "repo", "reason": "r"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.vars = tc.vars
			defer func() { e.vars = nil }()
			r := e.run(tc.cli...)
			if r.code != tc.code {
				t.Fatalf("CLI exit %d, want %d: %s", r.code, tc.code, r.stderr)
			}
			res := mcpCall(t, tc.mcp, tc.tool, tc.args)
			if !res.IsError {
				t.Fatalf("%s succeeded over MCP", tc.tool)
			}
			got := res.Content[0].(*sdk.TextContent).Text
			if want := palacemcp.Reword(strings.TrimSuffix(r.stderr, "\n")); got != want {
				t.Errorf("MCP says\n%s\nCLI says, reworded\n%s", got, want)
			}
			if strings.Contains(got, "`palace ") || regexp.MustCompile(`(^|\s)--[a-z]`).MatchString(got) {
				t.Errorf("MCP error names a CLI command or flag:\n%s", got)
			}
		})
	}
}

func TestMCPStdoutCarriesOnlyJSONRPC(t *testing.T) {
	e := newEnv(t)
	cmd := exec.Command(palaceBin, "mcp", "--log-level", "debug")
	cmd.Dir = e.dir
	cmd.Env = append(filteredEnv(), "PALACE_HOME="+e.home)
	cmd.Stdin = strings.NewReader(strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`not json at all`,
	}, "\n") + "\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("palace mcp at EOF: %v\n%s", err, stderr.String())
	}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 1<<20)
	lines := 0
	for sc.Scan() {
		lines++
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m["jsonrpc"] != "2.0" {
			t.Errorf("stdout line is not JSON-RPC: %q", sc.Text())
		}
	}
	if lines == 0 {
		t.Error("nothing on stdout")
	}
	if !strings.Contains(stderr.String(), "palace mcp serving") || !strings.Contains(stderr.String(), "mode=agent") {
		t.Errorf("--log-level debug logged nothing useful to stderr: %q", stderr.String())
	}
}

// TestMCPAnswersEveryRequestAtEOF: requests piped into the real binary,
// whose stdin then closes, are all answered before it exits — every time,
// not only when the server happens to answer before it reads the end.
func TestMCPAnswersEveryRequestAtEOF(t *testing.T) {
	e := newEnv(t)
	lines := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}\n` +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}\n` +
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n`
	for i := range 10 {
		cmd := exec.Command("sh", "-c", `printf "$LINES" | "$PALACE" mcp`)
		cmd.Dir = e.dir
		cmd.Env = append(filteredEnv(), "PALACE_HOME="+e.home, "PALACE="+palaceBin, "LINES="+lines)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("run %d: printf … | palace mcp: %v\n%s", i, err, stderr.String())
		}
		got := map[float64]map[string]any{}
		for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("run %d: stdout line is not JSON: %q", i, line)
			}
			id, _ := m["id"].(float64)
			got[id] = m
		}
		if got[1]["result"] == nil {
			t.Fatalf("run %d: no answer to initialize:\n%s", i, stdout.String())
		}
		res, _ := got[2]["result"].(map[string]any)
		if tools, _ := res["tools"].([]any); len(tools) == 0 {
			t.Fatalf("run %d: no answer to tools/list:\n%s", i, stdout.String())
		}
	}
}

func TestMCPBadLogLevel(t *testing.T) {
	r := newEnv(t).run("mcp", "--log-level", "loud")
	wantCode(t, r, 2, `--log-level "loud" is not valid: use debug, info, warn or error`)
}

// TestMCPReloadsEditedPolicies: a team policy written while the server runs
// decides the next gate call, without a restart.
func TestMCPReloadsEditedPolicies(t *testing.T) {
	e := newEnv(t)
	seen, fixed := e.record("seen"), e.record("verified")
	card := e.distill("Run make lint before pushing", "qi", "--supporting", seen, "--verification", fixed)
	cs := e.mcpSession(t, nil)
	allowed := func() bool {
		res := mcpCall(t, cs, "palace_gate", map[string]any{"id": card})
		var g struct{ Allow bool }
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &g); err != nil {
			t.Fatal(err)
		}
		return g.Allow
	}
	if !allowed() {
		t.Fatal("the default gate denies a qi card with 1 supporting and 1 verification")
	}
	dir := filepath.Join(e.dir, ".palace", "policies")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rego := "package palace.gate\n\nimport rego.v1\n\ndecision := {\"allow\": false, \"reasons\": [\"team: frozen\"], \"missing\": {}}\n"
	if err := os.WriteFile(filepath.Join(dir, "gate.rego"), []byte(rego), 0o644); err != nil {
		t.Fatal(err)
	}
	// fsnotify delivers the edit asynchronously; poll, bounded.
	deadline := time.Now().Add(10 * time.Second)
	for allowed() {
		if time.Now().After(deadline) {
			t.Fatal("the edited team gate never took effect in the running server")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestMCPEndsCleanlyOnSIGINT: the first SIGINT ends the server with exit 0
// while the client still holds stdin open.
func TestMCPEndsCleanlyOnSIGINT(t *testing.T) {
	e := newEnv(t)
	cmd := exec.Command(palaceBin, "mcp")
	cmd.Dir = e.dir
	cmd.Env = append(filteredEnv(), "PALACE_HOME="+e.home)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`+"\n")
	// Once initialize is answered the server is serving.
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || !strings.Contains(line, `"id":1,"result"`) {
		t.Fatalf("initialize: %q %v", line, err)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("palace mcp after SIGINT: %v", err)
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("palace mcp did not end after SIGINT")
	}
}

// TestMCPFreshHomeReadsCreateNothing serves a home that does not exist yet:
// reads (tools, resources, a context pack, a brief, the card list) answer
// from an empty palace and leave no database behind; the first write creates
// it, and what it wrote is read back in the same session.
func TestMCPFreshHomeReadsCreateNothing(t *testing.T) {
	e := newEnv(t)
	cs := e.mcpSession(t, nil)
	ctx := context.Background()
	db := filepath.Join(e.home, "palace.db")
	for _, call := range []struct {
		name string
		args map[string]any
	}{
		{"palace_context", map[string]any{"query": "how do we run the migrations"}},
		{"palace_brief", map[string]any{}},
		{"palace_cards", map[string]any{}},
	} {
		if res := mcpCall(t, cs, call.name, call.args); res.IsError {
			t.Fatalf("%s on a fresh home: %+v", call.name, res.Content)
		}
	}
	if _, err := cs.ListResources(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("reads on a fresh home left %s behind (stat: %v)", db, err)
	}
	res := mcpCall(t, cs, "palace_record", map[string]any{"content": "go test ./... needs CGO_ENABLED=0 here", "field": "build", "source_ref": "Makefile:12"})
	if res.IsError {
		t.Fatalf("record: %+v", res.Content)
	}
	if _, err := os.Stat(db); err != nil {
		t.Fatalf("the first write did not create the database: %v", err)
	}
	out := e.run("evidence", "list", "--format", "json")
	if out.code != 0 || !strings.Contains(out.stdout, "CGO_ENABLED=0") {
		t.Fatalf("the recorded evidence is not in the new database: %+v", out)
	}
	if res := mcpCall(t, cs, "palace_context", map[string]any{"query": "run the tests"}); res.IsError {
		t.Fatalf("context after the first write: %+v", res.Content)
	}
}
