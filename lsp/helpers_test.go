package lsp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/intake"
	"github.com/palacehq/palace/lsp"
)

// palaceBin is the real CLI, built once, for changes "by another process".
var palaceBin string

func TestMain(m *testing.M) {
	code := func() int {
		dir, err := os.MkdirTemp("", "palace-lsp-test")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		palaceBin = filepath.Join(dir, "palace")
		build := exec.Command("go", "build", "-o", palaceBin, "github.com/palacehq/palace/cmd/palace")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build palace: %v\n%s", err, out)
			return 1
		}
		return m.Run()
	}()
	os.Exit(code)
}

// waitLimit bounds every wait so a broken server fails a test instead of
// hanging it; it is a safety net, not a timing assertion.
const waitLimit = 30 * time.Second

// fixture is a palace home and a git checkout with cards in it.
type fixture struct {
	t    testing.TB
	home string
	repo string
	h    *host.Host
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	root := t.TempDir()
	// Resolve symlinks (macOS /var → /private/var) so paths compare equal.
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	f := &fixture{t: t, home: filepath.Join(root, "home"), repo: filepath.Join(root, "repo")}
	if err := os.MkdirAll(f.repo, 0o755); err != nil {
		t.Fatal(err)
	}
	f.git("init", "-q", "-b", "main")
	f.git("remote", "add", "origin", "git@github.com:acme/widgets.git")
	f.git("commit", "-q", "--allow-empty", "-m", "init")
	h, err := host.Open(context.Background(), host.Options{Home: f.home, Cwd: f.repo, Mode: host.Human, Actor: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	f.h = h
	return f
}

func (f *fixture) git(args ...string) string {
	f.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = f.repo
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e")
	out, err := cmd.CombinedOutput()
	if err != nil {
		f.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// palace runs the real CLI against the fixture and returns its stdout.
func (f *fixture) palace(args ...string) string {
	f.t.Helper()
	cmd := exec.Command(palaceBin, append([]string{"--home", f.home}, args...)...)
	cmd.Dir = f.repo
	cmd.Env = append(os.Environ(), "PALACE_MODE=", "PALACE_HOME=")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		f.t.Fatalf("palace %v: %v\n%s", args, err, stderr.String())
	}
	return strings.TrimSpace(stdout.String())
}

// cardSpec describes a card to write.
type cardSpec struct {
	statement, tier string
	scope           domain.Scope
	trigger         domain.Trigger
	persistence     string
	candidate       bool
}

// card records evidence and writes a card: promoted (directly), or a
// candidate with enough evidence to pass the default gate.
func (f *fixture) card(c cardSpec) string {
	f.t.Helper()
	ctx := context.Background()
	sup, err := f.h.Intake().Record(ctx, intake.RecordRequest{Content: "seen: " + c.statement, SourceRef: "notes/" + c.tier + ".md"})
	if err != nil {
		f.t.Fatal(err)
	}
	ver, err := f.h.Intake().Record(ctx, intake.RecordRequest{Content: "checked: " + c.statement})
	if err != nil {
		f.t.Fatal(err)
	}
	req := intake.DistillRequest{Statement: c.statement, Tier: c.tier, Supporting: []string{sup.ID}, Verification: []string{ver.ID},
		Scope: c.scope, Trigger: c.trigger, Persistence: c.persistence}
	if !c.candidate {
		req.Direct, req.Status = true, "promoted"
	}
	card, err := f.h.Distill(ctx, req)
	if err != nil {
		f.t.Fatal(err)
	}
	return card.ID
}

// write writes a file under the checkout and returns its path.
func (f *fixture) write(rel, content string) string {
	f.t.Helper()
	p := filepath.Join(f.repo, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
	return p
}

// client is an LSP client over an in-memory pipe to a Server in this process.
type client struct {
	t      testing.TB
	srv    *lsp.Server
	conn   jsonrpc2.Conn
	raw    net.Conn
	served chan error
	cancel context.CancelFunc

	// mu guards the notifications received.
	mu        sync.Mutex
	cond      *sync.Cond
	diags     map[uri.URI][]protocol.PublishDiagnosticsParams
	logs      []string
	shown     []string
	refreshes map[string]int
}

// start serves a new Server on a pipe; setup may adjust it before Serve.
func start(t testing.TB, opts lsp.Options, setup func(*lsp.Server)) *client {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	a, b := net.Pipe()
	if opts.Log == nil {
		opts.Log = testLog{t}
	}
	srv := lsp.New(opts)
	if setup != nil {
		setup(srv)
	}
	c := &client{t: t, srv: srv, raw: b, served: make(chan error, 1), cancel: cancel,
		diags: map[uri.URI][]protocol.PublishDiagnosticsParams{}, refreshes: map[string]int{}}
	c.cond = sync.NewCond(&c.mu)
	go func() { c.served <- srv.Serve(ctx, a) }()
	c.conn = jsonrpc2.NewConn(jsonrpc2.NewHeaderStream(b))
	c.conn.Go(ctx, c.handle)
	t.Cleanup(c.close)
	return c
}

// startRaw serves a new Server on a pipe the test reads and writes itself.
func startRaw(t testing.TB, opts lsp.Options, setup func(*lsp.Server)) *rawClient {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	a, b := net.Pipe()
	if opts.Log == nil {
		opts.Log = testLog{t}
	}
	srv := lsp.New(opts)
	if setup != nil {
		setup(srv)
	}
	rc := &rawClient{t: t, conn: b, r: bufio.NewReader(b), served: make(chan error, 1)}
	go func() { rc.served <- srv.Serve(ctx, a) }()
	t.Cleanup(func() {
		cancel()
		b.Close()
		<-rc.served
	})
	return rc
}

type testLog struct{ t testing.TB }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func (c *client) close() {
	c.cancel()
	c.raw.Close()
	select {
	case <-c.served:
	case <-time.After(waitLimit):
		c.t.Error("the server did not stop")
	}
}

func (c *client) handle(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer c.cond.Broadcast()
	method := strings.Clone(req.Method()) // borrowed from the frame
	switch method {
	case protocol.MethodTextDocumentPublishDiagnostics:
		var p protocol.PublishDiagnosticsParams
		if err := protocol.Unmarshal(req.Params(), &p); err != nil {
			c.t.Errorf("publishDiagnostics: %v", err)
			return nil, nil
		}
		c.diags[p.URI] = append(c.diags[p.URI], p)
	case protocol.MethodWindowLogMessage:
		var p protocol.LogMessageParams
		_ = protocol.Unmarshal(req.Params(), &p)
		c.logs = append(c.logs, p.Message)
	case protocol.MethodWindowShowMessage:
		var p protocol.ShowMessageParams
		_ = protocol.Unmarshal(req.Params(), &p)
		c.shown = append(c.shown, p.Message)
	case protocol.MethodWorkspaceCodeLensRefresh, protocol.MethodWorkspaceInlayHintRefresh:
		c.refreshes[method]++
		return nil, nil
	default:
		if req.IsCall() {
			return nil, jsonrpc2.ErrMethodNotFound
		}
	}
	return nil, nil
}

// call sends a request; params are encoded with the protocol encoder and
// the result decoded into result (protocol types) when not nil.
func (c *client) call(method string, params, result any) error {
	c.t.Helper()
	var p any
	if params != nil {
		b, err := protocol.Marshal(params)
		if err != nil {
			c.t.Fatal(err)
		}
		p = jsonrpc2.RawMessage(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	var out jsonrpc2.RawMessage
	if _, err := c.conn.Call(ctx, method, p, &out); err != nil {
		return err
	}
	if result == nil {
		return nil
	}
	if j, ok := result.(*json.RawMessage); ok {
		*j = json.RawMessage(out)
		return nil
	}
	return protocol.Unmarshal(out, result)
}

func (c *client) mustCall(method string, params, result any) {
	c.t.Helper()
	if err := c.call(method, params, result); err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
}

func (c *client) notify(method string, params any) {
	c.t.Helper()
	b, err := protocol.Marshal(params)
	if err != nil {
		c.t.Fatal(err)
	}
	if err := c.conn.Notify(context.Background(), method, jsonrpc2.RawMessage(b)); err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
}

// initialize runs initialize + initialized with the fixture's checkout as
// the workspace folder and the given initializationOptions.
func (c *client) initialize(f *fixture, options any) *protocol.InitializeResult {
	c.t.Helper()
	opts, _ := json.Marshal(options)
	if options == nil {
		opts = nil
	}
	yes := true
	p := &protocol.InitializeParams{
		//lint:ignore SA1019 clients still send it; the server must cope
		RootURI: ptr(uri.File(f.repo)),
		Capabilities: protocol.ClientCapabilities{Workspace: &protocol.WorkspaceClientCapabilities{
			CodeLens:  &protocol.CodeLensWorkspaceClientCapabilities{RefreshSupport: &yes},
			InlayHint: &protocol.InlayHintWorkspaceClientCapabilities{RefreshSupport: &yes},
		}},
		InitializationOptions: opts,
	}
	p.WorkspaceFolders = protocol.NewNullable([]protocol.WorkspaceFolder{{URI: uri.File(f.repo), Name: "repo"}})
	var res protocol.InitializeResult
	c.mustCall(protocol.MethodInitialize, p, &res)
	c.notify(protocol.MethodInitialized, &protocol.InitializedParams{})
	return &res
}

func ptr[T any](v T) *T { return &v }

// open sends didOpen for path with text and returns its URI.
func (c *client) open(path, lang, text string) uri.URI {
	c.t.Helper()
	u := uri.File(path)
	c.notify(protocol.MethodTextDocumentDidOpen, &protocol.DidOpenTextDocumentParams{TextDocument: protocol.TextDocumentItem{
		URI: u, LanguageID: protocol.LanguageKind(lang), Version: 1, Text: text,
	}})
	return u
}

func (c *client) hover(u uri.URI, line, char uint32) string {
	c.t.Helper()
	var h *protocol.Hover
	c.mustCall(protocol.MethodTextDocumentHover, &protocol.HoverParams{TextDocumentPositionParams: protocol.TextDocumentPositionParams{
		TextDocument: protocol.TextDocumentIdentifier{URI: u}, Position: protocol.Position{Line: line, Character: char},
	}}, &h)
	if h == nil {
		return ""
	}
	if mc, ok := h.Contents.(*protocol.MarkupContent); ok {
		return mc.Value
	}
	c.t.Fatalf("hover contents %T, want MarkupContent", h.Contents)
	return ""
}

// waitDiagnostics waits for a publish on u that ok accepts and returns it.
func (c *client) waitDiagnostics(u uri.URI, ok func([]protocol.Diagnostic) bool) []protocol.Diagnostic {
	c.t.Helper()
	deadline := time.Now().Add(waitLimit)
	timer := time.AfterFunc(waitLimit, func() { c.cond.Broadcast() })
	defer timer.Stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := 0
	for {
		for ; seen < len(c.diags[u]); seen++ {
			if ds := c.diags[u][seen].Diagnostics; ok(ds) {
				return ds
			}
		}
		if time.Now().After(deadline) {
			var last []protocol.Diagnostic
			if n := len(c.diags[u]); n > 0 {
				last = c.diags[u][n-1].Diagnostics
			}
			c.t.Fatalf("no matching diagnostics for %s; last published: %s", u, diagText(last))
		}
		c.cond.Wait()
	}
}

// waitLog waits for a window/logMessage containing substr.
func (c *client) waitLog(substr string) string {
	c.t.Helper()
	return c.waitFor(&c.logs, "log message", substr)
}

// waitShown waits for a window/showMessage containing substr.
func (c *client) waitShown(substr string) string {
	c.t.Helper()
	return c.waitFor(&c.shown, "shown message", substr)
}

func (c *client) waitFor(msgs *[]string, what, substr string) string {
	c.t.Helper()
	deadline := time.Now().Add(waitLimit)
	timer := time.AfterFunc(waitLimit, func() { c.cond.Broadcast() })
	defer timer.Stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		for _, l := range *msgs {
			if strings.Contains(l, substr) {
				return l
			}
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("no %s containing %q; got %q", what, substr, *msgs)
		}
		c.cond.Wait()
	}
}

// waitRefresh waits for a workspace/…/refresh request from the server.
func (c *client) waitRefresh(method string) {
	c.t.Helper()
	deadline := time.Now().Add(waitLimit)
	timer := time.AfterFunc(waitLimit, func() { c.cond.Broadcast() })
	defer timer.Stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.refreshes[method] == 0 {
		if time.Now().After(deadline) {
			c.t.Fatalf("no %s request", method)
		}
		c.cond.Wait()
	}
}

// diagText renders diagnostics as "line:col-line:col severity code message".
func diagText(ds []protocol.Diagnostic) string {
	var lines []string
	for _, d := range ds {
		code := ""
		if s, ok := d.Code.(protocol.String); ok {
			code = string(s)
		}
		msg := ""
		if s, ok := d.Message.(protocol.String); ok {
			msg = string(s)
		}
		lines = append(lines, fmt.Sprintf("%d:%d-%d:%d sev%d %s %s", d.Range.Start.Line, d.Range.Start.Character,
			d.Range.End.Line, d.Range.End.Character, d.Severity, code, msg))
	}
	return strings.Join(lines, "\n")
}

// rpcCode is the JSON-RPC error code of err, 0 for none.
func rpcCode(err error) jsonrpc2.Code {
	var e *jsonrpc2.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

// rawClient speaks LSP framing by hand, for malformed input and exact ids.
type rawClient struct {
	t      testing.TB
	conn   net.Conn
	r      *bufio.Reader
	served chan error
}

func (rc *rawClient) send(body string) {
	rc.t.Helper()
	frame := "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	if _, err := io.WriteString(rc.conn, frame); err != nil {
		rc.t.Fatalf("write: %v", err)
	}
}

// recv reads frames until one satisfies ok (server notifications and
// requests are skipped) and returns it decoded.
func (rc *rawClient) recv(ok func(map[string]any) bool) map[string]any {
	rc.t.Helper()
	_ = rc.conn.SetReadDeadline(time.Now().Add(waitLimit))
	for {
		n := -1
		for {
			line, err := rc.r.ReadString('\n')
			if err != nil {
				rc.t.Fatalf("read header: %v", err)
			}
			line = strings.TrimSpace(line)
			if line == "" {
				break
			}
			if v, found := strings.CutPrefix(line, "Content-Length: "); found {
				n, _ = strconv.Atoi(v)
			}
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(rc.r, body); err != nil {
			rc.t.Fatalf("read body: %v", err)
		}
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			rc.t.Fatalf("server sent invalid JSON %q: %v", body, err)
		}
		if ok(m) {
			return m
		}
	}
}

// response waits for the response with this id (a JSON literal: 7 or "a").
func (rc *rawClient) response(id string) map[string]any {
	rc.t.Helper()
	return rc.recv(func(m map[string]any) bool {
		if _, isReq := m["method"]; isReq {
			return false
		}
		b, _ := json.Marshal(m["id"])
		return string(b) == id
	})
}

func errorCode(m map[string]any) int {
	e, ok := m["error"].(map[string]any)
	if !ok {
		return 0
	}
	return int(e["code"].(float64))
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}`
