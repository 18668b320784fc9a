package agenthook_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/palacehq/palace/host/agenthook"
	"github.com/palacehq/palace/internal/hosterr"
)

func wantInvalid(t *testing.T, what string, err error, sub string) {
	t.Helper()
	var he *hosterr.Error
	if !errors.As(err, &he) || he.Kind != hosterr.KindInvalid || !strings.Contains(err.Error(), sub) {
		t.Errorf("%s: %v; want KindInvalid naming %q", what, err, sub)
	}
}

func TestReadPayloadTakesTheAgentsPromptEvents(t *testing.T) {
	for _, c := range []struct{ agent, event string }{
		{agenthook.ClaudeCode, "SessionStart"},
		{agenthook.ClaudeCode, "UserPromptSubmit"},
		{agenthook.GeminiCLI, "SessionStart"},
		{agenthook.GeminiCLI, "BeforeAgent"},
	} {
		in := `{"session_id":"s1","cwd":"/w","hook_event_name":"` + c.event + `","prompt":"  fix the build  ","source":"startup","transcript_path":"/x"}`
		p, err := agenthook.ReadPayload(c.agent, strings.NewReader(in))
		if err != nil {
			t.Fatalf("%s %s: %v", c.agent, c.event, err)
		}
		want := agenthook.Payload{Agent: c.agent, Event: c.event, Prompt: "fix the build", Cwd: "/w", SessionID: "s1", Source: "startup"}
		if p != want {
			t.Errorf("%s %s: %+v, want %+v", c.agent, c.event, p, want)
		}
	}
}

func TestReadPayloadRefusals(t *testing.T) {
	for _, c := range []struct{ agent, in, want string }{
		{"cursor", `{"hook_event_name":"SessionStart"}`, `--hook "cursor" is not supported`},
		{agenthook.ClaudeCode, `not json`, "is not a JSON object"},
		{agenthook.ClaudeCode, `{"hook_event_name":"SessionStart"} {}`, "more than one JSON value"},
		{agenthook.ClaudeCode, `{"prompt":"hi"}`, "has no hook_event_name"},
		// Each agent names its prompt event its own way.
		{agenthook.ClaudeCode, `{"hook_event_name":"BeforeAgent"}`, `hook event "BeforeAgent" is not one palace answers for claude-code`},
		{agenthook.GeminiCLI, `{"hook_event_name":"UserPromptSubmit"}`, "SessionStart or BeforeAgent"},
	} {
		_, err := agenthook.ReadPayload(c.agent, strings.NewReader(c.in))
		wantInvalid(t, c.agent+" "+c.in, err, c.want)
	}
}

func TestReadPayloadRefusesAPayloadOverTheLimit(t *testing.T) {
	big := `{"hook_event_name":"UserPromptSubmit","prompt":"` + strings.Repeat("a", agenthook.MaxPayloadBytes) + `"}`
	_, err := agenthook.ReadPayload(agenthook.ClaudeCode, strings.NewReader(big))
	wantInvalid(t, "payload over the limit", err, "stdin is over the limit")
	// Just under the limit is read whole, not truncated.
	ok := `{"hook_event_name":"UserPromptSubmit","prompt":"` + strings.Repeat("a", agenthook.MaxPayloadBytes-100) + `"}`
	p, err := agenthook.ReadPayload(agenthook.ClaudeCode, strings.NewReader(ok))
	if err != nil || len(p.Prompt) != agenthook.MaxPayloadBytes-100 {
		t.Fatalf("payload under the limit: prompt of %d bytes, %v", len(p.Prompt), err)
	}
}

func TestResponseNamesTheEventForClaudeCodeOnly(t *testing.T) {
	decode := func(b []byte) map[string]map[string]string {
		t.Helper()
		if !strings.HasSuffix(string(b), "}\n") {
			t.Errorf("response %q does not end in one newline", b)
		}
		var m map[string]map[string]string
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	b, err := agenthook.Response(agenthook.Payload{Agent: agenthook.ClaudeCode, Event: "UserPromptSubmit"}, "# palace\nrule")
	if err != nil {
		t.Fatal(err)
	}
	if got := decode(b)["hookSpecificOutput"]; got["hookEventName"] != "UserPromptSubmit" || got["additionalContext"] != "# palace\nrule" {
		t.Errorf("claude-code response: %s", b)
	}
	b, err = agenthook.Response(agenthook.Payload{Agent: agenthook.GeminiCLI, Event: "BeforeAgent"}, "")
	if err != nil {
		t.Fatal(err)
	}
	got := decode(b)["hookSpecificOutput"]
	if _, named := got["hookEventName"]; named || got["additionalContext"] != "" || !strings.Contains(string(b), `"additionalContext":""`) {
		t.Errorf("gemini-cli response: %s; want the context alone, empty", b)
	}
}
