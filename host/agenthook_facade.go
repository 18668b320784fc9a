package host

import (
	"io"

	"github.com/palacehq/palace/host/agenthook"
)

// Agents' session and prompt hooks are spoken by package agenthook; host
// keeps the old names.

// Hook agents (see package agenthook).
const (
	HookClaudeCode      = agenthook.ClaudeCode
	HookGeminiCLI       = agenthook.GeminiCLI
	MaxHookPayloadBytes = agenthook.MaxPayloadBytes
)

// HookPayload is what an agent's hook passes on stdin (see agenthook.Payload).
type HookPayload = agenthook.Payload

// ReadHookPayload reads one hook payload of agent from r (see
// agenthook.ReadPayload): bad input is KindInvalid.
func ReadHookPayload(agent string, r io.Reader) (HookPayload, error) {
	return agenthook.ReadPayload(agent, r)
}

// HookResponse is the answer an agent's hook prints on stdout, with the
// rendered pack as the added context (see agenthook.Response).
func HookResponse(p HookPayload, pack Pack) ([]byte, error) {
	return agenthook.Response(p, pack.Rendered)
}
