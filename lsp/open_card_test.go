package lsp_test

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/palacehq/palace/lsp"
	"github.com/palacehq/palace/ui"
)

// TestOpenCardCommand: palace.openCard answers the card page of the desk
// running for the palace home, and says so when none runs.
func TestOpenCardCommand(t *testing.T) {
	s := newSeeded(t)
	c := start(t, lsp.Options{Home: s.home}, nil)
	c.initialize(s.fixture, nil)
	u := c.open(s.file, "go", openGo)
	open := func() (map[string]string, error) {
		var out map[string]string
		err := c.call(protocol.MethodWorkspaceExecuteCommand, &protocol.ExecuteCommandParams{Command: "palace.openCard",
			Arguments: []protocol.LSPAny{mustJSON(t, map[string]any{"uri": u, "id": s.qi})}}, &out)
		return out, err
	}
	if _, err := open(); err == nil || !strings.Contains(err.Error(), "no palace ui is running") {
		t.Fatalf("without a desk: err = %v, want one that says to start palace ui", err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := ui.New(ctx, s.h, ln.Addr(), ui.Options{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	defer func() { cancel(); <-done; srv.Close() }()
	remove, err := srv.WriteRunFile(s.home)
	if err != nil {
		t.Fatal(err)
	}
	defer remove()

	got, err := open()
	if err != nil {
		t.Fatal(err)
	}
	want := srv.URL("/card/" + s.qi)
	if got["url"] != want {
		raw, _ := json.Marshal(got)
		t.Fatalf("palace.openCard = %s, want url %s", raw, want)
	}
}
