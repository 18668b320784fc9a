package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/mcp"
)

// fixedNow is the tests' clock: packs and ids depend on time.
var fixedNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// palaceEnv is one isolated palace: a home and a git checkout.
type palaceEnv struct {
	home, dir string
}

func newPalaceEnv(t testing.TB) palaceEnv {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir()) // anchors resolve symlinks
	if err != nil {
		t.Fatal(err)
	}
	e := palaceEnv{home: filepath.Join(root, "home"), dir: filepath.Join(root, "repo")}
	if err := os.MkdirAll(e.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"remote", "add", "origin", "git@github.com:acme/widgets.git"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = e.dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return e
}

// open opens a Host on e in mode.
func (e palaceEnv) open(t testing.TB, mode host.Mode) *host.Host {
	t.Helper()
	h, err := host.Open(context.Background(), host.Options{Home: e.home, Cwd: e.dir, Mode: mode, Actor: "tester", Now: func() time.Time { return fixedNow }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// session connects a go-sdk client to a server over h through the SDK's
// in-memory transport.
type session struct {
	t  testing.TB
	cs *sdk.ClientSession
}

func connect(t testing.TB, h *host.Host) *session {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	srv := mcp.New(h, mcp.Options{Version: "test"})
	st, ct := sdk.NewInMemoryTransports()
	if _, err := srv.Connect(ctx, st); err != nil {
		t.Fatal(err)
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "palace-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return &session{t: t, cs: cs}
}

// on binds the session to a subtest, so its failures stop the subtest.
func (s *session) on(t testing.TB) *session { return &session{t: t, cs: s.cs} }

func (s *session) toolNames() []string {
	s.t.Helper()
	res, err := s.cs.ListTools(context.Background(), nil)
	if err != nil {
		s.t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

func (s *session) tool(name string) *sdk.Tool {
	s.t.Helper()
	res, err := s.cs.ListTools(context.Background(), nil)
	if err != nil {
		s.t.Fatal(err)
	}
	for _, tl := range res.Tools {
		if tl.Name == name {
			return tl
		}
	}
	s.t.Fatalf("no tool %s", name)
	return nil
}

// call calls a tool; a JSON-RPC error fails the test.
func (s *session) call(name string, args any) *sdk.CallToolResult {
	s.t.Helper()
	res, err := s.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		s.t.Fatalf("%s: %v", name, err)
	}
	return res
}

// ok calls a tool that must succeed and decodes its structured result.
func (s *session) ok(name string, args any) map[string]any {
	s.t.Helper()
	res := s.call(name, args)
	if res.IsError {
		s.t.Fatalf("%s(%v): tool error: %s", name, args, text(res))
	}
	out := structured(s.t, res)
	s.checkOutput(name, out)
	return out
}

// checkOutput validates a result's structuredContent against the output
// schema the tool advertises, as a validating client would: every tool
// call a test makes through ok checks the schema against what is sent.
func (s *session) checkOutput(name string, out map[string]any) {
	s.t.Helper()
	raw, err := json.Marshal(s.tool(name).OutputSchema)
	if err != nil {
		s.t.Fatal(err)
	}
	var schema jsonschema.Schema
	if err := json.Unmarshal(raw, &schema); err != nil {
		s.t.Fatalf("%s: output schema does not decode: %v", name, err)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		s.t.Fatalf("%s: output schema does not resolve: %v", name, err)
	}
	if err := resolved.Validate(out); err != nil {
		got, _ := json.Marshal(out)
		s.t.Fatalf("%s: result does not match its output schema: %v\n%s", name, err, got)
	}
}

// fail calls a tool that must return a tool error and returns its text.
func (s *session) fail(name string, args any) string {
	s.t.Helper()
	res := s.call(name, args)
	if !res.IsError {
		s.t.Fatalf("%s(%v) succeeded, want a tool error: %s", name, args, text(res))
	}
	return text(res)
}

// rpcError calls a tool that must fail with a JSON-RPC error.
func (s *session) rpcError(name string, args any) *jsonrpc.Error {
	s.t.Helper()
	res, err := s.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err == nil {
		s.t.Fatalf("%s answered %v, want a JSON-RPC error", name, res)
	}
	var we *jsonrpc.Error
	if !errors.As(err, &we) {
		s.t.Fatalf("%s: error %v (%T) is not a JSON-RPC error", name, err, err)
	}
	return we
}

func text(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func structured(t testing.TB, res *sdk.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
	return m
}

// record records evidence through the tool and returns its id.
func (s *session) record(content string) string {
	s.t.Helper()
	return s.ok(mcp.ToolRecord, map[string]any{"content": content, "field": "storage", "source_ref": "test"})["id"].(string)
}
