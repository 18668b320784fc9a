package host

import (
	"io"

	"github.com/palacehq/palace/host/agenthook"
	"github.com/palacehq/palace/host/pack"
)

// Agents' session and prompt hooks are spoken by package agenthook; host
// keeps the old names.

// ReadHookPayload reads one hook payload of agent from r (see
// agenthook.ReadPayload): bad input is KindInvalid.
func ReadHookPayload(agent string, r io.Reader) (agenthook.Payload, error) {
	return agenthook.ReadPayload(agent, r)
}

// HookResponse is the answer an agent's hook prints on stdout, with the
// rendered pack as the added context (see agenthook.Response).
func HookResponse(p agenthook.Payload, pack pack.Pack) ([]byte, error) {
	return agenthook.Response(p, pack.Rendered)
}
