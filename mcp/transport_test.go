package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/mcp"
)

// wire is a raw JSON-RPC conversation with a server over pipes: what a
// careless or hostile client can send, byte for byte.
type wire struct {
	t   *testing.T
	in  *io.PipeWriter
	out *bufio.Scanner
}

func (w *wire) send(line string) {
	w.t.Helper()
	if _, err := io.WriteString(w.in, line+"\n"); err != nil {
		w.t.Fatal(err)
	}
}

// next reads the next message the server wrote.
func (w *wire) next() map[string]any {
	w.t.Helper()
	if !w.out.Scan() {
		w.t.Fatalf("server wrote nothing more: %v", w.out.Err())
	}
	var m map[string]any
	if err := json.Unmarshal(w.out.Bytes(), &m); err != nil {
		w.t.Fatalf("server wrote a line that is not JSON: %q", w.out.Text())
	}
	return m
}

func wantError(t *testing.T, m map[string]any, id any, code float64, msgHas string) {
	t.Helper()
	e, _ := m["error"].(map[string]any)
	if e == nil || m["id"] != id || e["code"] != code || !strings.Contains(e["message"].(string), msgHas) {
		t.Errorf("got %v, want error id=%v code=%v mentioning %q", m, id, code, msgHas)
	}
}

func TestStdioSurvivesMalformedInput(t *testing.T) {
	h := newPalaceEnv(t).open(t, host.Agent)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := mcp.New(h, mcp.Options{})
	ss, err := srv.Connect(context.Background(), &mcp.StdioTransport{In: inR, Out: outW, MaxFrameBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(outR)
	sc.Buffer(nil, 1<<20)
	w := &wire{t: t, in: inW, out: sc}

	w.send("this is not json")
	wantError(t, w.next(), nil, -32700, "parse error")
	w.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":`) // cut short
	wantError(t, w.next(), nil, -32700, "not valid JSON")
	w.send(`[{"jsonrpc":"2.0","id":2,"method":"ping"}]`)
	wantError(t, w.next(), nil, -32600, "batches are not supported")
	w.send(`"just a string"`)
	wantError(t, w.next(), nil, -32600, "a JSON-RPC message is a JSON object")
	w.send(`{"jsonrpc":"1.0","id":"a","method":"ping"}`)
	wantError(t, w.next(), "a", -32600, "invalid request")
	w.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"palace_record","arguments":{"content":"` + strings.Repeat("x", 5000) + `"}}}`)
	wantError(t, w.next(), nil, -32700, "over 4096 bytes")
	w.send("")
	w.send("   \t")

	// After all that, the session works.
	w.send(`{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if m := w.next(); m["id"] != float64(4) || m["result"] == nil {
		t.Fatalf("initialize after garbage: %v", m)
	}
	w.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	w.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"palace_record","arguments":{"content":"survived"}}}`)
	m := w.next()
	res, _ := m["result"].(map[string]any)
	if m["id"] != float64(5) || res == nil || res["isError"] == true || res["structuredContent"].(map[string]any)["content"] != "survived" {
		t.Errorf("record after garbage: %v", m)
	}
	w.send(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":"x"}`)
	wantError(t, w.next(), float64(6), -32602, "invalid params")

	// Closing stdin ends the session without error.
	inW.Close()
	if err := ss.Wait(); err != nil && err != io.EOF {
		t.Errorf("session ended with %v", err)
	}
}

func TestRunEndsCleanlyAtEOF(t *testing.T) {
	h := newPalaceEnv(t).open(t, host.Agent)
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}` + "\n")
	if err := mcp.New(h, mcp.Options{}).Run(context.Background(), in, io.Discard); err != nil {
		t.Fatalf("Run at EOF: %v", err)
	}
}

// TestRunAnswersEveryRequestBeforeEOF: a client that writes its requests
// and closes its end at once (a shell pipe) gets every answer, in a
// session that reads and writes the palace.
func TestRunAnswersEveryRequestBeforeEOF(t *testing.T) {
	h := newPalaceEnv(t).open(t, host.Agent)
	in := strings.NewReader(strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":"rec","method":"tools/call","params":{"name":"palace_record","arguments":{"content":"piped in, then EOF","anchor":"global"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"palace_context","arguments":{"query":"piped"}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"ping"}`,
	}, "\n") + "\n")
	var out strings.Builder
	if err := mcp.New(h, mcp.Options{}).Run(context.Background(), in, &out); err != nil {
		t.Fatalf("Run: %v", err)
	}
	got := map[any]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		got[m["id"]] = m
	}
	for _, id := range []any{float64(1), float64(2), "rec", float64(4), float64(5)} {
		if m := got[id]; m == nil || m["result"] == nil {
			t.Errorf("request %v: answer %v, want a result", id, m)
		}
	}
	if res, _ := got["rec"]["result"].(map[string]any); res == nil || res["isError"] == true {
		t.Errorf("palace_record: %v", got["rec"])
	}
}

// TestTransportAnswersTheServersCallsAfterEOF: once the client's input
// has ended, a call the server makes (it could wait for ever) gets an
// error at once, and EOF comes after the client's own calls are answered.
func TestTransportAnswersTheServersCallsAfterEOF(t *testing.T) {
	ctx := context.Background()
	var out strings.Builder
	conn, err := (&mcp.StdioTransport{In: strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"ping"}` + "\n"), Out: &out}).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	msg, err := conn.Read(ctx)
	req, ok := msg.(*jsonrpc.Request)
	if err != nil || !ok || req.Method != "ping" {
		t.Fatalf("first read: %v, %v", msg, err)
	}
	// The ping is not answered yet: EOF must wait, while a call of the
	// server's is answered by the transport.
	id, _ := jsonrpc.MakeID(float64(100))
	if err := conn.Write(ctx, &jsonrpc.Request{ID: id, Method: "roots/list"}); err != nil {
		t.Fatal(err)
	}
	msg, err = conn.Read(ctx)
	resp, ok := msg.(*jsonrpc.Response)
	if err != nil || !ok || resp.ID != id || resp.Error == nil || !strings.Contains(resp.Error.Error(), "closed its input") {
		t.Fatalf("read after the server's call: %#v, %v", msg, err)
	}
	early, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if msg, err := conn.Read(early); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("read with the ping unanswered: %v, %v; want to wait", msg, err)
	}
	if err := conn.Write(ctx, &jsonrpc.Response{ID: req.ID, Result: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if msg, err := conn.Read(ctx); err != io.EOF {
		t.Fatalf("read after the answer: %v, %v; want EOF", msg, err)
	}
	if !strings.Contains(out.String(), `"id":7`) {
		t.Errorf("the answer was not written: %q", out.String())
	}
}

func TestRunEndsCleanlyOnCancel(t *testing.T) {
	h := newPalaceEnv(t).open(t, host.Agent)
	inR, inW := io.Pipe()
	defer inW.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- mcp.New(h, mcp.Options{}).Run(ctx, inR, io.Discard) }()
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run after cancel: %v", err)
	}
}

// TestErrorsBeforeInitializeHaveCodes: the SDK refuses requests before
// initialize without a JSON-RPC code; the transport gives them -32002
// (server not initialized), a failed initialize -32600, never code 0.
func TestErrorsBeforeInitializeHaveCodes(t *testing.T) {
	h := newPalaceEnv(t).open(t, host.Agent)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ss, err := mcp.New(h, mcp.Options{}).Connect(context.Background(), &mcp.StdioTransport{In: inR, Out: outW})
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(outR)
	sc.Buffer(nil, 1<<20)
	w := &wire{t: t, in: inW, out: sc}

	w.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	wantError(t, w.next(), float64(1), -32002, "send initialize first")
	w.send(`{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"palace_record","arguments":{"content":"early"}}}`)
	wantError(t, w.next(), "c", -32002, "not initialized")
	w.send(`{"jsonrpc":"2.0","id":2,"method":"initialize"}`) // no params
	wantError(t, w.next(), float64(2), -32600, "params")

	w.send(`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if m := w.next(); m["id"] != float64(3) || m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	w.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	// A NUL-leading content is a tool error naming the argument, not an
	// internal failure.
	w.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"palace_record","arguments":{"content":"\u0000evil"}}}`)
	m := w.next()
	res, _ := m["result"].(map[string]any)
	if m["id"] != float64(4) || res == nil || res["isError"] != true {
		t.Fatalf("NUL content: %v", m)
	}
	if text := res["content"].([]any)[0].(map[string]any)["text"].(string); !strings.Contains(text, "content") || !strings.Contains(text, "NUL") {
		t.Errorf("NUL content error does not name the argument: %q", text)
	}
	inW.Close()
	if err := ss.Wait(); err != nil && err != io.EOF {
		t.Errorf("session ended with %v", err)
	}
}
