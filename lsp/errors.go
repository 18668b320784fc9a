package lsp

import (
	"context"
	"encoding/json"
	"errors"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/palacehq/palace/host"
)

// codeRequestFailed is LSP's RequestFailed: the request was valid but the
// server said no (a gate denied it).
const codeRequestFailed jsonrpc2.Code = -32803

// rpcError maps a host error onto a JSON-RPC error, one kind to one code, as
// the CLI maps kinds to exit codes: bad input and a mode refusal are
// InvalidParams (as MCP does), a denial is RequestFailed with the reasons
// as data, anything else is InternalError.
func rpcError(err error) error {
	if err == nil {
		return nil
	}
	var rpc *jsonrpc2.Error
	if errors.As(err, &rpc) {
		return err
	}
	if errors.Is(err, context.Canceled) {
		return protocol.ErrRequestCancelled
	}
	var he *host.Error
	if !errors.As(err, &he) {
		return jsonrpc2.Errorf(jsonrpc2.InternalError, "%v", err)
	}
	out := &jsonrpc2.Error{Message: he.Error()}
	switch he.Kind {
	case host.KindInvalid, host.KindMode:
		out.Code = jsonrpc2.InvalidParams
	case host.KindDenied:
		out.Code = codeRequestFailed
	default:
		out.Code = jsonrpc2.InternalError
	}
	if len(he.Reasons) > 0 || he.Field != "" {
		data, _ := json.Marshal(struct {
			Kind    string   `json:"kind"`
			Field   string   `json:"field,omitempty"`
			Reasons []string `json:"reasons,omitempty"`
		}{kindNames[he.Kind], he.Field, he.Reasons})
		out.Data = data
	}
	return out
}

var kindNames = map[host.Kind]string{host.KindInternal: "internal", host.KindInvalid: "invalid", host.KindDenied: "denied", host.KindMode: "mode"}
