package mcp

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestEncodeMessageFastPathIsTheSDKsEncoding: framing a response's result
// as it is must give the message jsonrpc.EncodeMessage gives.
func TestEncodeMessageFastPathIsTheSDKsEncoding(t *testing.T) {
	strID, _ := jsonrpc.MakeID("req-7")
	numID, _ := jsonrpc.MakeID(float64(42))
	for _, msg := range []jsonrpc.Message{
		&jsonrpc.Response{ID: numID, Result: json.RawMessage(`{"content":[{"type":"text","text":"a <b> & ü\\n"}],"structuredContent":{"x":[1,2.5,null]}}`)},
		&jsonrpc.Response{ID: strID, Result: json.RawMessage(`{}`)},
		&jsonrpc.Response{ID: numID, Error: &jsonrpc.Error{Code: -32602, Message: "bad"}},
	} {
		fast, err := encodeMessage(msg)
		if err != nil {
			t.Fatal(err)
		}
		slow, err := jsonrpc.EncodeMessage(msg)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.IndexByte(fast, '\n') >= 0 {
			t.Errorf("%s spans lines", fast)
		}
		var a, b any
		if err := json.Unmarshal(fast, &a); err != nil {
			t.Fatalf("%s: %v", fast, err)
		}
		if err := json.Unmarshal(slow, &b); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("fast %s\nsdk  %s", fast, slow)
		}
		back, err := jsonrpc.DecodeMessage(fast)
		if err != nil {
			t.Fatalf("the SDK cannot read %s: %v", fast, err)
		}
		if got := back.(*jsonrpc.Response).ID; got != msg.(*jsonrpc.Response).ID {
			t.Errorf("id %v, want %v", got, msg.(*jsonrpc.Response).ID)
		}
	}
}
