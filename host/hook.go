package host

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Hook agents: the agents whose session and prompt hooks palace answers.
const (
	// HookClaudeCode is Claude Code's command hooks (SessionStart,
	// UserPromptSubmit): a JSON payload on stdin, a JSON answer on stdout
	// whose hookSpecificOutput.additionalContext Claude Code adds to the
	// conversation.
	HookClaudeCode = "claude-code"
)

// MaxHookPayloadBytes bounds a hook payload read from stdin (a prompt can be
// long; a payload over this is refused, not truncated).
const MaxHookPayloadBytes = 1 << 20

// HookPayload is what an agent's hook passes on stdin, in the agent's terms.
type HookPayload struct {
	Agent string `json:"agent"`
	// Event is the hook event: SessionStart or UserPromptSubmit.
	Event string `json:"event"`
	// Prompt is the user's prompt (UserPromptSubmit; empty at SessionStart).
	Prompt string `json:"prompt,omitempty"`
	// Cwd is the session's working directory.
	Cwd       string `json:"cwd,omitempty"`
	SessionID string `json:"session_id,omitempty"`
	// Source says why a session started: startup, resume, clear, compact.
	Source string `json:"source,omitempty"`
}

// claudeHookInput is Claude Code's payload; fields palace does not use
// (transcript_path, permission_mode, …) are ignored.
type claudeHookInput struct {
	SessionID     string `json:"session_id"`
	Cwd           string `json:"cwd"`
	HookEventName string `json:"hook_event_name"`
	Prompt        string `json:"prompt"`
	Source        string `json:"source"`
}

// ReadHookPayload reads one hook payload of agent from r (at most
// MaxHookPayloadBytes). An unknown agent, a payload that is not one JSON
// object, or an event palace does not answer is KindInvalid.
func ReadHookPayload(agent string, r io.Reader) (HookPayload, error) {
	if agent != HookClaudeCode {
		return HookPayload{}, invalid("hook", "--hook %q is not supported: use %s", agent, HookClaudeCode)
	}
	dec := json.NewDecoder(LimitInput("stdin", r, MaxHookPayloadBytes))
	var in claudeHookInput
	if err := dec.Decode(&in); err != nil {
		var he *Error
		if errors.As(err, &he) {
			return HookPayload{}, he
		}
		return HookPayload{}, invalid("stdin", "the hook payload on stdin is not a JSON object (%v): run palace from the agent's hook, which writes one", err)
	}
	if dec.More() {
		return HookPayload{}, invalid("stdin", "the hook payload on stdin holds more than one JSON value: pass one object")
	}
	switch in.HookEventName {
	case "SessionStart", "UserPromptSubmit":
	case "":
		return HookPayload{}, invalid("stdin", "the hook payload has no hook_event_name: register palace for SessionStart or UserPromptSubmit")
	default:
		return HookPayload{}, invalid("stdin", "hook event %q is not one palace answers: register palace for SessionStart or UserPromptSubmit", in.HookEventName)
	}
	return HookPayload{Agent: agent, Event: in.HookEventName, Prompt: strings.TrimSpace(in.Prompt), Cwd: in.Cwd, SessionID: in.SessionID, Source: in.Source}, nil
}

// HookResponse is the answer an agent's hook prints on stdout: for Claude
// Code {"hookSpecificOutput": {"hookEventName": …, "additionalContext": …}},
// the rendered pack as the added context (empty when nothing applies).
func HookResponse(p HookPayload, pack Pack) ([]byte, error) {
	type specific struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	}
	out := struct {
		HookSpecificOutput specific `json:"hookSpecificOutput"`
	}{specific{HookEventName: p.Event, AdditionalContext: pack.Rendered}}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode hook response: %w", err)
	}
	return append(b, '\n'), nil
}
