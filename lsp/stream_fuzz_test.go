package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"
)

// pipe is a connection reading fixed bytes and recording what is written.
type pipe struct {
	r io.Reader
	w bytes.Buffer
}

func (p *pipe) Read(b []byte) (int, error)  { return p.r.Read(b) }
func (p *pipe) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p *pipe) Close() error                { return nil }

// frame writes a message with its Content-Length header.
func frame(body string) string {
	return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)
}

// FuzzHeaderFraming feeds arbitrary bytes to the server's stream (the
// bounded Content-Length framing under the tolerant layer): it must never panic,
// every frame it hands on must decode as JSON-RPC, and everything it writes
// back must be well-framed JSON-RPC errors (parse or invalid request).
func FuzzHeaderFraming(f *testing.F) {
	for _, s := range []string{
		frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`),
		frame(`{"jsonrpc":"2.0","method":"initialized","params":{}}`) + frame(`not json`),
		frame(`[{"jsonrpc":"2.0","id":1,"method":"x"}]`) + frame(`[1,`),
		frame(`{"jsonrpc":"2.0"}`) + frame(`{"id":{}}`),
		"Content-Length: 5\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}{}{",
		"Content-Length: -1\r\n\r\n",
		"Content-Length: 0\r\n\r\n",
		"content-length:3\n\n\"x\"",
		"Content-Length 3\r\n\r\nabc",
		"Content-Length: 99999999999999999999\r\n\r\n",
		"Content-Length: 1073741824\r\n\r\n{}",
		"Content-Length: 67108865\r\n\r\n" + frame(`{"jsonrpc":"2.0","id":1,"method":"x"}`),
		"X-Long: " + strings.Repeat("a", 5000) + "\r\n\r\n",
		"Content-Length: 10\r\n\r\nshort",
		"\r\n\r\n",
		"Content-Length: 2\r\nContent-Length: 4\r\n\r\nnull",
		frame("\x00\xff\xfe"),
		frame(`{"jsonrpc":"2.0","id":"\u202e","method":"\u0000"}`),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		conn := &pipe{r: bytes.NewReader(data)}
		var bad int
		s, err := newStream(conn, func(error) { bad++ })
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		for range 1000 {
			body, _, err := s.ReadFrame(ctx)
			if err != nil {
				break
			}
			if cerr := checkFrame(body); cerr != nil {
				t.Fatalf("frame %q handed on although checkFrame says %v", body, cerr)
			}
		}
		replies := checkReplies(t, conn.w.Bytes())
		if replies != bad {
			t.Fatalf("%d frames rejected, %d replies written", bad, replies)
		}
	})
}

// checkReplies parses what the stream wrote: only framed JSON-RPC error
// responses with a null id and a parse or invalid-request code.
func checkReplies(t *testing.T, out []byte) int {
	t.Helper()
	n := 0
	for len(out) > 0 {
		head, rest, ok := bytes.Cut(out, []byte("\r\n\r\n"))
		if !ok || !bytes.HasPrefix(head, []byte("Content-Length: ")) {
			t.Fatalf("reply not framed: %q", out)
		}
		size, err := strconv.Atoi(strings.TrimPrefix(string(head), "Content-Length: "))
		if err != nil || size > len(rest) {
			t.Fatalf("reply header %q for %d bytes", head, len(rest))
		}
		var msg struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   *struct {
				Code    int64  `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(rest[:size], &msg); err != nil {
			t.Fatalf("reply %q is not JSON: %v", rest[:size], err)
		}
		if msg.JSONRPC != "2.0" || string(msg.ID) != "null" || msg.Error == nil ||
			(msg.Error.Code != int64(jsonrpc2.ParseError) && msg.Error.Code != int64(jsonrpc2.InvalidRequest)) {
			t.Fatalf("reply %q is not a parse or invalid-request error", rest[:size])
		}
		out = rest[size:]
		n++
	}
	return n
}
