package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

const lspTestGo = `package db

import "database/sql"

// migrate the schema first
func Open(p string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", p)
	if err != nil {
		return nil, err
	}
	return db, nil
}
`

// seedLSP builds a workspace with the real CLI: a qi card with a trigger
// pattern scoped to Go files and a dao_ren card with an intent tag, both
// promoted through the gate, and db/open.go.
func seedLSP(t *testing.T) (e *env, qi, dao string) {
	e = newEnv(t)
	ev1 := e.record("database is locked under parallel tests", "--source-ref", "notes/wal.md", "--field", "storage")
	ev2 := e.record("with WAL the tests pass 50 of 50 runs", "--field", "storage")
	qi = e.distill("Open SQLite in WAL mode", "qi", "--supporting", ev1, "--field", "storage",
		"--scope-path", "**/*.go", "--scope-lang", "go", "--trigger-pattern", `sql\.Open\(`, "--persistence", "foundational")
	e.ok("promote", qi, "--reason", "verified", "--verification", ev2)
	ev3 := e.record("a down migration dropped production data")
	ev4 := e.record("forward-only migrations kept two releases safe")
	ev5 := e.record("rollback by a new migration worked in the incident")
	dao = e.distill("Migrations are forward-only", "dao_ren", "--supporting", ev3+","+ev4,
		"--scope-path", "**/*.go", "--scope-lang", "go", "--intent", "migrate", "--persistence", "foundational")
	e.ok("promote", dao, "--reason", "team rule", "--verification", ev5)
	if err := os.MkdirAll(filepath.Join(e.dir, "db"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.dir, "db", "open.go"), []byte(lspTestGo), 0o644); err != nil {
		t.Fatal(err)
	}
	return e, qi, dao
}

func TestHintsCommand(t *testing.T) {
	e, qi, _ := seedLSP(t)
	out := e.ok("hints", "db/open.go")
	want := fmt.Sprintf("db/open.go:7:13: %s ‹qi› Open SQLite in WAL mode\n", qi)
	if out != want {
		t.Fatalf("palace hints:\n%s\nwant\n%s", out, want)
	}
	var res struct {
		Files []struct {
			File    string `json:"file"`
			Matches []struct {
				Line, Col, EndCol int
				Card              struct{ ID string }
			} `json:"matches"`
		} `json:"files"`
	}
	if err := json.Unmarshal([]byte(e.ok("hints", "db/open.go", "--format", "json")), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 1 || len(res.Files[0].Matches) != 1 || res.Files[0].Matches[0].Card.ID != qi {
		t.Fatalf("hints json: %+v", res)
	}
	wantCode(t, e.run("hints", "nope.go"), 2, "FILE nope.go cannot be read")
}

// lspProcess is `palace lsp` driven over its real stdin/stdout.
type lspProcess struct {
	t   *testing.T
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func startLSP(t *testing.T, e *env, args ...string) *lspProcess {
	t.Helper()
	return startLSPIn(t, e, e.home, args...)
}

// startLSPIn starts `palace lsp args…` in e's checkout with PALACE_HOME home.
func startLSPIn(t *testing.T, e *env, home string, args ...string) *lspProcess {
	t.Helper()
	cmd := exec.Command(palaceBin, append([]string{"lsp"}, args...)...)
	cmd.Dir = e.dir
	cmd.Env = append(filteredEnv(), "PALACE_HOME="+home, "USER=tester")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return &lspProcess{t: t, cmd: cmd, in: in, out: bufio.NewReader(out)}
}

func (p *lspProcess) send(body string) {
	p.t.Helper()
	if _, err := fmt.Fprintf(p.in, "Content-Length: %d\r\n\r\n%s", len(body), body); err != nil {
		p.t.Fatal(err)
	}
}

// recv returns the next message; everything on stdout must be a frame.
func (p *lspProcess) recv() map[string]any {
	p.t.Helper()
	n := -1
	for {
		line, err := p.out.ReadString('\n')
		if err != nil {
			p.t.Fatalf("read header: %v", err)
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		v, ok := strings.CutPrefix(line, "Content-Length: ")
		if !ok {
			p.t.Fatalf("stdout carries a non-protocol line: %q", line)
		}
		n, _ = strconv.Atoi(v)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(p.out, body); err != nil {
		p.t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		p.t.Fatalf("frame is not JSON: %q", body)
	}
	return m
}

// response skips notifications and server requests until the response to id.
func (p *lspProcess) response(id float64) map[string]any {
	p.t.Helper()
	m, _ := p.responseAndShown(id)
	return m
}

// responseAndShown is response, with the window/showMessage texts the
// server sent before it.
func (p *lspProcess) responseAndShown(id float64) (map[string]any, []string) {
	p.t.Helper()
	var shown []string
	for {
		m := p.recv()
		if m["method"] == "window/showMessage" {
			params, _ := m["params"].(map[string]any)
			msg, _ := params["message"].(string)
			shown = append(shown, msg)
		}
		if got, ok := m["id"].(float64); ok && got == id && m["method"] == nil {
			return m, shown
		}
	}
}

// TestLSPHomeIsTheUsers: the real server serves the home of its
// environment (PALACE_HOME) or its command line (--home, which wins), and a
// "home" in the client's settings — which a repository's editor settings
// can supply — is ignored with a message saying how to set it.
func TestLSPHomeIsTheUsers(t *testing.T) {
	e, _, _ := seedLSP(t)
	shipped := filepath.Join(e.dir, ".vscode", "palace")
	file := "file://" + filepath.Join(e.dir, "db", "open.go")
	lens := func(p *lspProcess) (string, []string) {
		p.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":"file://` + e.dir +
			`","capabilities":{},"initializationOptions":{"home":"` + shipped + `"}}}`)
		_, shown := p.responseAndShown(1)
		p.send(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
		p.send(`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"` + file + `","languageId":"go","version":1,"text":` + strconv.Quote(lspTestGo) + `}}}`)
		p.send(`{"jsonrpc":"2.0","id":2,"method":"textDocument/codeLens","params":{"textDocument":{"uri":"` + file + `"}}}`)
		m, more := p.responseAndShown(2)
		lenses, _ := m["result"].([]any)
		if len(lenses) == 0 {
			t.Fatalf("no code lens: %v", m)
		}
		title, _ := lenses[0].(map[string]any)["command"].(map[string]any)["title"].(string)
		return title, append(shown, more...)
	}
	const want = "palace · dao 1 · shu 0 · qi 1"
	for _, c := range []struct {
		name, env string
		args      []string
	}{
		{"PALACE_HOME", e.home, nil},
		{"--home over PALACE_HOME", filepath.Join(t.TempDir(), "elsewhere"), []string{"--home", e.home}},
	} {
		t.Run(c.name, func(t *testing.T) {
			title, shown := lens(startLSPIn(t, e, c.env, c.args...))
			if !strings.HasPrefix(title, want) {
				t.Errorf("lens %q, want the user's palace (%s)", title, want)
			}
			if len(shown) == 0 || !strings.Contains(shown[0], `the home setting "`+shipped+`" is ignored`) || !strings.Contains(shown[0], "user settings") {
				t.Errorf("shown messages %q, want the home setting named as ignored", shown)
			}
		})
	}
	if _, err := os.Stat(shipped); !os.IsNotExist(err) {
		t.Errorf("the server created or opened the workspace's palace (%v)", err)
	}
}

func (p *lspProcess) wait() int {
	p.t.Helper()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		if err != nil {
			p.t.Fatal(err)
		}
		return 0
	case <-time.After(30 * time.Second):
		p.t.Fatal("palace lsp did not exit")
		return -1
	}
}

func TestLSPProcessExitCodes(t *testing.T) {
	e, _, _ := seedLSP(t)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":"file://` + e.dir + `","capabilities":{}}}`

	p := startLSP(t, e)
	p.send(init)
	if m := p.response(1); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	p.send(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
	p.send(`{"jsonrpc":"2.0","id":2,"method":"shutdown"}`)
	p.response(2)
	p.send(`{"jsonrpc":"2.0","method":"exit"}`)
	if code := p.wait(); code != 0 {
		t.Fatalf("exit after shutdown: status %d, want 0", code)
	}

	p = startLSP(t, e, "--mode", "agent")
	p.send(init)
	m := p.response(1)
	caps, _ := json.Marshal(m["result"])
	if strings.Contains(string(caps), "palace.promote") || !strings.Contains(string(caps), "palace.gate") {
		t.Fatalf("agent mode capabilities: %s", caps)
	}
	p.send(`{"jsonrpc":"2.0","method":"exit"}`)
	if code := p.wait(); code != 1 {
		t.Fatalf("exit without shutdown: status %d, want 1", code)
	}
}

// TestNeovimEndToEnd drives the real binary from a real editor: headless
// Neovim with examples/editors/neovim starts `palace lsp`, opens a Go file
// of a workspace built with the CLI, and reports what palace showed.
func TestNeovimEndToEnd(t *testing.T) {
	nvim, err := exec.LookPath("nvim")
	if err != nil {
		t.Skip("nvim is not on PATH: install Neovim (Debian: apt-get install -y neovim) to run the editor end-to-end test")
	}
	e, qi, dao := seedLSP(t)
	_, self, _, _ := runtime.Caller(0)
	example := filepath.Join(filepath.Dir(self), "..", "..", "examples", "editors", "neovim")
	out := filepath.Join(t.TempDir(), "result.json")
	logFile := filepath.Join(t.TempDir(), "lsp.log")

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nvim, "--headless", "-n", "-i", "NONE",
		"-u", filepath.Join(example, "init.lua"),
		"+luafile "+filepath.Join(example, "test", "e2e.lua"),
		filepath.Join("db", "open.go"))
	cmd.Dir = e.dir
	cmd.Env = append(filteredEnv(), "PALACE_HOME="+e.home, "USER=tester", "PALACE_BIN="+palaceBin,
		"PALACE_LSP_ARGS=--log-file="+logFile, "PALACE_E2E_OUT="+out, "XDG_STATE_HOME="+t.TempDir(), "XDG_DATA_HOME="+t.TempDir())
	if b, err := cmd.CombinedOutput(); err != nil {
		log, _ := os.ReadFile(logFile)
		t.Fatalf("nvim: %v\n%s\nserver log:\n%s", err, b, log)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("nvim wrote no result: %v", err)
	}
	t.Logf("neovim saw: %s", raw)
	var res struct {
		Errors []string `json:"errors"`
		Hover  struct {
			Contents struct{ Kind, Value string } `json:"contents"`
		} `json:"hover"`
		HoverMigrate struct {
			Contents struct{ Value string } `json:"contents"`
		} `json:"hover_migrate"`
		Codelens []struct {
			Range   struct{ Start struct{ Line int } } `json:"range"`
			Command struct{ Title, Command string }    `json:"command"`
		} `json:"codelens"`
		Inlay []struct {
			Position struct{ Line, Character int } `json:"position"`
			Label    string                        `json:"label"`
			Tooltip  struct{ Value string }        `json:"tooltip"`
		} `json:"inlay"`
		Context struct {
			Request struct{ File string } `json:"request"`
			Items   []struct{ ID string } `json:"items"`
		} `json:"context"`
		Diagnostics []struct {
			Lnum, Col, EndCol, Severity int
			Source, Message, Code       string
		} `json:"diagnostics"`
		VirtualText []struct {
			Line int
			Text string
		} `json:"virtual_text"`
		CodelensShown []struct {
			Line  int
			Title string
		} `json:"codelens_shown"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) > 0 {
		log, _ := os.ReadFile(logFile)
		t.Fatalf("errors in neovim: %q\nserver log:\n%s", res.Errors, log)
	}
	hover := res.Hover.Contents.Value
	for _, want := range []string{"triggered here", "‹qi› Open SQLite in WAL mode — promoted · worktree · 1 supporting · 1 verification · `" + qi + "`",
		"applies to db/open.go", "Migrations are forward-only", dao} {
		if !strings.Contains(hover, want) {
			t.Errorf("hover lacks %q:\n%s", want, hover)
		}
	}
	if !strings.Contains(res.HoverMigrate.Contents.Value, "`migrate` is one of its intents") {
		t.Errorf("hover on migrate:\n%s", res.HoverMigrate.Contents.Value)
	}
	if len(res.Codelens) != 1 || res.Codelens[0].Command.Title != "palace · dao 1 · shu 0 · qi 1" || res.Codelens[0].Command.Command != "palace.context" {
		t.Errorf("code lens: %+v", res.Codelens)
	}
	if len(res.Inlay) != 1 || res.Inlay[0].Position.Line != 6 || res.Inlay[0].Label != "‹qi› Open SQLite in WAL mode" ||
		!strings.Contains(res.Inlay[0].Tooltip.Value, "notes/wal.md") || !strings.Contains(res.Inlay[0].Tooltip.Value, qi) {
		t.Errorf("inlay hints: %+v", res.Inlay)
	}
	if res.Context.Request.File != "db/open.go" || len(res.Context.Items) != 2 {
		t.Errorf("palace/context: %+v", res.Context)
	}
	if len(res.Diagnostics) != 1 || res.Diagnostics[0].Lnum != 6 || res.Diagnostics[0].Col != 12 || res.Diagnostics[0].Code != qi ||
		res.Diagnostics[0].Source != "palace" || res.Diagnostics[0].Severity != 4 {
		t.Errorf("diagnostics: %+v", res.Diagnostics)
	}
	if len(res.VirtualText) != 1 || res.VirtualText[0].Line != 6 || !strings.Contains(res.VirtualText[0].Text, "‹qi› Open SQLite in WAL mode") {
		t.Errorf("inlay hints drawn as virtual text: %+v", res.VirtualText)
	}
	if len(res.CodelensShown) != 1 || res.CodelensShown[0].Line != 0 || !strings.HasPrefix(res.CodelensShown[0].Title, "palace · dao 1") {
		t.Errorf("code lens shown: %+v", res.CodelensShown)
	}
}

// TestLSPOversizedFrameIsSkipped sends `palace lsp` a 200 MiB message: the
// server skips it without holding it (peak RSS stays far below its size),
// answers it with an invalid-request error naming the limit, and serves the
// next message.
func TestLSPOversizedFrameIsSkipped(t *testing.T) {
	e, _, _ := seedLSP(t)
	p := startLSP(t, e)
	const size = 200 << 20
	go func() {
		// The reply to the big frame can come before all of it is written.
		if _, err := fmt.Fprintf(p.in, "Content-Length: %d\r\n\r\n", size); err != nil {
			return
		}
		chunk := bytes.Repeat([]byte("x"), 1<<20)
		for range size >> 20 {
			if _, err := p.in.Write(chunk); err != nil {
				return
			}
		}
		p.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}`)
	}()
	m := p.recv()
	errObj, _ := m["error"].(map[string]any)
	if errObj == nil || errObj["code"] != float64(-32600) || !strings.Contains(fmt.Sprint(errObj["message"]), "exceeds the limit of 67108864 bytes") {
		t.Fatalf("reply to a 200 MiB frame: %v", m)
	}
	if r := p.response(1); r["result"] == nil {
		t.Fatalf("initialize after the big frame: %v", r)
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		t.Skipf("no /proc to read peak memory from: %v", err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if kb <= 0 || kb > 150<<10 {
				t.Errorf("peak RSS %d kB after a 200 MiB frame: the body was held", kb)
			}
		}
	}
}
