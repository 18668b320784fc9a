package lsp_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/palacehq/palace/lsp"
)

func TestRequestBeforeInitialize(t *testing.T) {
	f := newFixture(t)
	c := start(t, lsp.Options{Home: f.home}, nil)
	err := c.call(protocol.MethodTextDocumentHover, &protocol.HoverParams{}, nil)
	if got := rpcCode(err); got != jsonrpc2.ServerNotInitialized {
		t.Fatalf("hover before initialize: err = %v (code %d), want ServerNotInitialized (-32002)", err, got)
	}
	// A notification before initialize is dropped, and the server still
	// initializes afterwards.
	c.notify(protocol.MethodTextDocumentDidOpen, &protocol.DidOpenTextDocumentParams{TextDocument: protocol.TextDocumentItem{URI: uri.File(f.write("a.go", "x")), Text: "x"}})
	if res := c.initialize(f, nil); res.ServerInfo.Name != "palace" {
		t.Fatalf("serverInfo = %+v", res.ServerInfo)
	}
	if err := c.call("initialize", &protocol.InitializeParams{}, nil); rpcCode(err) != jsonrpc2.InvalidRequest {
		t.Errorf("second initialize: err = %v, want InvalidRequest", err)
	}
}

func TestUnknownMethods(t *testing.T) {
	f := newFixture(t)
	c := start(t, lsp.Options{Home: f.home}, nil)
	c.initialize(f, nil)
	if err := c.call("palace/nope", map[string]any{}, nil); rpcCode(err) != jsonrpc2.MethodNotFound {
		t.Fatalf("unknown request: err = %v, want MethodNotFound (-32601)", err)
	}
	// Unknown notifications ($/ and others) are ignored.
	c.notify("$/setTrace", map[string]any{"value": "off"})
	c.notify("palace/whatever", map[string]any{})
	// A known notification sent as a request is not found either.
	if err := c.call(protocol.MethodTextDocumentDidOpen, map[string]any{}, nil); rpcCode(err) != jsonrpc2.MethodNotFound {
		t.Fatalf("didOpen as a request: err = %v, want MethodNotFound", err)
	}
	u := c.open(f.write("a.go", "package a\n"), "go", "package a\n")
	var lens []protocol.CodeLens
	c.mustCall(protocol.MethodTextDocumentCodeLens, &protocol.CodeLensParams{TextDocument: protocol.TextDocumentIdentifier{URI: u}}, &lens)
	if len(lens) != 1 {
		t.Fatalf("the server stopped answering after unknown methods: lens = %+v", lens)
	}
}

func TestMalformedJSONGetsParseErrorAndServerLivesOn(t *testing.T) {
	f := newFixture(t)
	rc := startRaw(t, lsp.Options{Home: f.home}, nil)
	rc.send(initializeBody)
	if m := rc.response("1"); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	for _, bad := range []string{`{"jsonrpc":"2.0","id":2,"method":`, `not json at all`, `[{"jsonrpc":"2.0",`} {
		rc.send(bad)
		m := rc.response("null")
		if errorCode(m) != int(jsonrpc2.ParseError) {
			t.Fatalf("frame %q: response %v, want a parse error (-32700) with id null", bad, m)
		}
	}
	rc.send(`{"jsonrpc":"1.0","id":3,"method":"shutdown"}`)
	if m := rc.response("null"); errorCode(m) != int(jsonrpc2.InvalidRequest) {
		t.Fatalf("jsonrpc 1.0 frame: response %v, want invalid request (-32600)", m)
	}
	rc.send(`{"jsonrpc":"2.0","id":4,"method":"shutdown"}`)
	if m := rc.response("4"); m["error"] != nil {
		t.Fatalf("shutdown after malformed frames: %v", m)
	}
	rc.send(`{"jsonrpc":"2.0","method":"exit"}`)
	if err := <-rc.served; err != nil {
		t.Fatalf("Serve after shutdown and exit = %v, want nil", err)
	}
	rc.served <- nil // for the cleanup
}

func TestCancelRequestWithNumericAndStringIDs(t *testing.T) {
	f := newFixture(t)
	started := make(chan string, 4)
	rc := startRaw(t, lsp.Options{Home: f.home}, func(s *lsp.Server) {
		lsp.SetTestMethod(s, "palace/test/block", func(ctx context.Context, params []byte) (any, error) {
			started <- string(params)
			<-ctx.Done()
			return nil, ctx.Err()
		})
	})
	rc.send(initializeBody)
	rc.response("1")
	for _, tc := range []struct{ id, cancel string }{
		{"7", `{"id":7}`},
		{"8", `{"id":8.0}`},
		{`"req-9"`, `{"id":"req-9"}`},
	} {
		rc.send(`{"jsonrpc":"2.0","id":` + tc.id + `,"method":"palace/test/block","params":{}}`)
		<-started
		rc.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":` + tc.cancel + `}`)
		m := rc.response(tc.id)
		if errorCode(m) != int(protocol.CodeRequestCancelled) {
			t.Fatalf("id %s cancelled with %s: response %v, want RequestCancelled (-32800)", tc.id, tc.cancel, m)
		}
	}
	// Cancelling what is not in flight, or with a bad id, changes nothing.
	rc.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":12345}}`)
	rc.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":{"x":1}}}`)
	rc.send(`{"jsonrpc":"2.0","id":10,"method":"shutdown"}`)
	if m := rc.response("10"); m["error"] != nil {
		t.Fatalf("shutdown after cancels: %v", m)
	}
}

func TestPanicInHandlerIsRecovered(t *testing.T) {
	f := newFixture(t)
	c := start(t, lsp.Options{Home: f.home}, func(s *lsp.Server) {
		lsp.SetTestMethod(s, "palace/test/panic", func(_ context.Context, params []byte) (any, error) {
			var xs []int
			return xs[len(params)], nil // index out of range: panics
		})
	})
	c.initialize(f, nil)
	err := c.call("palace/test/panic", map[string]any{}, nil)
	if rpcCode(err) != jsonrpc2.InternalError || !strings.Contains(err.Error(), "panic") {
		t.Fatalf("panicking handler: err = %v, want InternalError naming the panic", err)
	}
	c.waitLog("palace/test/panic panicked")
	// The session goes on.
	u := c.open(f.write("b.go", "package b\n"), "go", "package b\n")
	var lens []protocol.CodeLens
	c.mustCall(protocol.MethodTextDocumentCodeLens, &protocol.CodeLensParams{TextDocument: protocol.TextDocumentIdentifier{URI: u}}, &lens)
	if len(lens) != 1 {
		t.Fatalf("after a panic: lens = %+v", lens)
	}
}

func TestShutdownAndExit(t *testing.T) {
	f := newFixture(t)
	c := start(t, lsp.Options{Home: f.home}, nil)
	c.initialize(f, nil)
	c.mustCall(protocol.MethodShutdown, nil, nil)
	if err := c.call(protocol.MethodTextDocumentHover, &protocol.HoverParams{}, nil); rpcCode(err) != jsonrpc2.InvalidRequest {
		t.Errorf("hover after shutdown: err = %v, want InvalidRequest", err)
	}
	c.notify(protocol.MethodExit, nil)
	if err := <-c.served; err != nil {
		t.Fatalf("Serve after shutdown + exit = %v, want nil (exit 0)", err)
	}
	c.served <- nil

	c2 := start(t, lsp.Options{Home: f.home}, nil)
	c2.initialize(f, nil)
	c2.notify(protocol.MethodExit, nil)
	if err := <-c2.served; !errors.Is(err, lsp.ErrExitWithoutShutdown) {
		t.Fatalf("Serve after exit without shutdown = %v, want ErrExitWithoutShutdown (exit 1)", err)
	}
	c2.served <- nil
}
