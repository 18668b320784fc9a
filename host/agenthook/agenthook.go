// Package agenthook speaks the session and prompt hooks of coding agents
// (Claude Code, Gemini CLI): the payload on stdin, the answer on stdout, and
// which events palace answers. What the answer says is handed in as text; it
// must not read the store or the policies.
package agenthook

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/palacehq/palace/internal/hosterr"
	"github.com/palacehq/palace/internal/limits"
)

// Hook agents: the agents whose session and prompt hooks palace answers.
const (
	// ClaudeCode is Claude Code's command hooks (SessionStart,
	// UserPromptSubmit): a JSON payload on stdin, a JSON answer on stdout
	// whose hookSpecificOutput.additionalContext Claude Code adds to the
	// conversation.
	ClaudeCode = "claude-code"
	// GeminiCLI is Gemini CLI's command hooks (SessionStart,
	// BeforeAgent): the same stdin payload shape, and an answer whose
	// hookSpecificOutput.additionalContext Gemini CLI adds to the turn.
	GeminiCLI = "gemini-cli"
)

// hookEvents are the events palace answers, per agent: the session start
// and the prompt.
var hookEvents = map[string][]string{
	ClaudeCode: {"SessionStart", "UserPromptSubmit"},
	GeminiCLI:  {"SessionStart", "BeforeAgent"},
}

// MaxPayloadBytes bounds a hook payload read from stdin (a prompt can be
// long; a payload over this is refused, not truncated).
const MaxPayloadBytes = 1 << 20

// Payload is what an agent's hook passes on stdin, in the agent's terms.
type Payload struct {
	Agent string `json:"agent"`
	// Event is the hook event: SessionStart, or the agent's prompt event
	// (UserPromptSubmit for Claude Code, BeforeAgent for Gemini CLI).
	Event string `json:"event"`
	// Prompt is the user's prompt (UserPromptSubmit; empty at SessionStart).
	Prompt string `json:"prompt,omitempty"`
	// Cwd is the session's working directory.
	Cwd       string `json:"cwd,omitempty"`
	SessionID string `json:"session_id,omitempty"`
	// Source says why a session started: startup, resume, clear, compact.
	Source string `json:"source,omitempty"`
}

// hookInput is Claude Code's and Gemini CLI's payload; fields palace does
// not use (transcript_path, permission_mode, timestamp, …) are ignored.
type hookInput struct {
	SessionID     string `json:"session_id"`
	Cwd           string `json:"cwd"`
	HookEventName string `json:"hook_event_name"`
	Prompt        string `json:"prompt"`
	Source        string `json:"source"`
}

// ReadPayload reads one hook payload of agent from r (at most
// MaxPayloadBytes). An unknown agent, a payload that is not one JSON
// object, or an event palace does not answer is KindInvalid.
func ReadPayload(agent string, r io.Reader) (Payload, error) {
	events, ok := hookEvents[agent]
	if !ok {
		return Payload{}, hosterr.Invalid("hook", "--hook %q is not supported: use %s or %s", agent, ClaudeCode, GeminiCLI)
	}
	dec := json.NewDecoder(limits.LimitInput("stdin", r, MaxPayloadBytes))
	var in hookInput
	if err := dec.Decode(&in); err != nil {
		var he *hosterr.Error
		if errors.As(err, &he) {
			return Payload{}, he
		}
		return Payload{}, hosterr.Invalid("stdin", "the hook payload on stdin is not a JSON object (%v): run palace from the agent's hook, which writes one", err)
	}
	if dec.More() {
		return Payload{}, hosterr.Invalid("stdin", "the hook payload on stdin holds more than one JSON value: pass one object")
	}
	want := strings.Join(events, " or ")
	switch {
	case in.HookEventName == "":
		return Payload{}, hosterr.Invalid("stdin", "the hook payload has no hook_event_name: register palace for %s", want)
	case !slices.Contains(events, in.HookEventName):
		return Payload{}, hosterr.Invalid("stdin", "hook event %q is not one palace answers for %s: register palace for %s", in.HookEventName, agent, want)
	}
	return Payload{Agent: agent, Event: in.HookEventName, Prompt: strings.TrimSpace(in.Prompt), Cwd: in.Cwd, SessionID: in.SessionID, Source: in.Source}, nil
}

// Response is the answer an agent's hook prints, rendered as the added
// context (empty when nothing applies) under hookSpecificOutput; Claude
// Code's validator also wants hookEventName.
func Response(p Payload, rendered string) ([]byte, error) {
	type specific struct {
		HookEventName     string `json:"hookEventName,omitempty"`
		AdditionalContext string `json:"additionalContext"`
	}
	out := struct {
		HookSpecificOutput specific `json:"hookSpecificOutput"`
	}{specific{AdditionalContext: rendered}}
	if p.Agent == ClaudeCode {
		out.HookSpecificOutput.HookEventName = p.Event
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode hook response: %w", err)
	}
	return append(b, '\n'), nil
}
