package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestToolPanicIsAToolError: a bug in a host operation ends that call, not
// the server.
func TestToolPanicIsAToolError(t *testing.T) {
	type args struct {
		N int `json:"n,omitempty" jsonschema:"a number"`
	}
	tl := newTool("palace_boom", "Boom", "explodes", hints{}, nil, func(context.Context, args) (output, error) {
		var a []int
		return output{Value: a[len(a)]}, nil // index out of range: a real runtime panic
	})
	res := tl.call(context.Background(), json.RawMessage(`{"n":1}`))
	if !res.IsError {
		t.Fatalf("a panicking tool answered %v", res)
	}
	msg := res.Content[0].(*sdk.TextContent).Text
	if !strings.HasPrefix(msg, "palace: palace_boom failed unexpectedly (a bug in palace; please report it with this message): runtime error: index out of range [0] with length 0") {
		t.Errorf("message %q", msg)
	}
}

func TestDecodeArgsNullAndEmptyAreNoArguments(t *testing.T) {
	type args struct {
		Query string `json:"query,omitempty"`
	}
	tl := newTool("palace_echo", "Echo", "echo", hints{}, nil, func(_ context.Context, a args) (output, error) {
		return output{Value: map[string]string{"query": a.Query}}, nil
	})
	for _, raw := range []string{"", "null", "{}", "  {} "} {
		if res := tl.call(context.Background(), json.RawMessage(raw)); res.IsError {
			t.Errorf("arguments %q: %v", raw, res.Content[0].(*sdk.TextContent).Text)
		}
	}
	res := tl.call(context.Background(), json.RawMessage(`[1]`))
	if got := res.Content[0].(*sdk.TextContent).Text; got != "palace: palace_echo arguments must be a JSON object, got an array" {
		t.Errorf("array arguments: %q", got)
	}
}
