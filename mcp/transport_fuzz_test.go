package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// FuzzLineFraming feeds arbitrary bytes to the stdio transport's framing:
// lines are split exactly (nothing lost or invented), none longer than the
// limit is returned, and each line is either a JSON-RPC message or gets a
// parse (-32700) or invalid-request (-32600) answer that is itself one valid
// JSON line.
func FuzzLineFraming(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}` + "\n",
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\r\n" + `[{"jsonrpc":"2.0"}]` + "\n",
		"not json\n{\"id\":\"x\"}\n{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"m\"}\n",
		"\xef\xbb\xbf{}\n\x00\n\xff\xfe\n",
		`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" + `{"jsonrpc":"2.0","id":2,"error":{"code":0,"message":"m"}}`,
		"   \n\n\t\n" + `"\u202e"` + "\n12\nnull\ntrue\n",
		string(bytes.Repeat([]byte("x"), 200)) + "\n{}\n",
	} {
		f.Add([]byte(s))
	}
	const limit = 64
	f.Fuzz(func(t *testing.T, data []byte) {
		br := bufio.NewReaderSize(bytes.NewReader(data), 16)
		var rebuilt []byte
		for {
			line, tooLong, err := readFrame(br, limit)
			if tooLong {
				if line != nil {
					t.Fatalf("an over-long line came back as %q", line)
				}
			} else {
				if len(line) > limit+2 {
					t.Fatalf("line of %d bytes over the limit %d", len(line), limit)
				}
				rebuilt = append(rebuilt, line...)
				if trimmed := bytes.TrimSpace(line); len(trimmed) > 0 {
					checkDecode(t, trimmed)
				}
			}
			if err != nil {
				break
			}
		}
		if len(data) <= limit && !bytes.Equal(rebuilt, data) {
			t.Fatalf("lines %q do not rebuild the input %q", rebuilt, data)
		}
	})
}

func checkDecode(t *testing.T, line []byte) {
	t.Helper()
	msg, id, code, reason := decodeFrame(line)
	if msg != nil {
		if !json.Valid(line) {
			t.Fatalf("%q decoded although it is not JSON", line)
		}
		return
	}
	if code != jsonrpc.CodeParseError && code != jsonrpc.CodeInvalidRequest {
		t.Fatalf("%q rejected with code %d", line, code)
	}
	if reason == "" {
		t.Fatalf("%q rejected without a reason", line)
	}
	var out bytes.Buffer
	c := &lineConn{out: &out}
	c.reject(id, code, reason)
	if bytes.Count(out.Bytes(), []byte("\n")) != 1 || !json.Valid(out.Bytes()) {
		t.Fatalf("answer to %q is not one JSON line: %q", line, out.Bytes())
	}
}
