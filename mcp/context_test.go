package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/intake"
	"github.com/palacehq/palace/host/pack"
	"github.com/palacehq/palace/mcp"
)

// seedPromoted gives the palace at e one promoted card and returns its id.
func seedPromoted(t *testing.T, h *host.Host, statement string) string {
	t.Helper()
	ctx := context.Background()
	seen, err := h.Intake().Record(ctx, intake.RecordRequest{Content: "seen: " + statement, Field: "storage", SourceRef: "ci#12"})
	if err != nil {
		t.Fatal(err)
	}
	fixed, err := h.Intake().Record(ctx, intake.RecordRequest{Content: "verified: " + statement, Field: "storage"})
	if err != nil {
		t.Fatal(err)
	}
	req := intake.DistillRequest{Statement: statement, Content: "Because the tests said so.", Tier: "qi", Field: "storage",
		Supporting: []string{seen.ID}, Verification: []string{fixed.ID}, Persistence: "foundational"}
	req.Scope.Paths, req.Trigger.Intents = []string{"store/**"}, []string{"debug"}
	c, err := h.Distill(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Promote(ctx, c.ID, host.PromoteRequest{Reason: "verified"}); err != nil {
		t.Fatal(err)
	}
	return c.ID
}

func TestContextIsTheHostsPack(t *testing.T) {
	e := newPalaceEnv(t)
	human := e.open(t, host.Human)
	id := seedPromoted(t, human, "Open SQLite in WAL mode")
	agent := e.open(t, host.Agent)
	s := connect(t, agent)

	limit := 1
	req := pack.ContextRequest{Query: "sqlite locking", File: "store/store.go", Intents: []string{"debug"},
		Instructions: []string{"answer in plain text"}, Budget: 4000, DaoTianLimit: &limit, IncludeEvidence: true, DryRun: true, RequestID: "rq_test",
		Fetch: pack.FetchByMCPTool}
	want, err := agent.Pack().Context(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	res := s.call(mcp.ToolContext, map[string]any{"query": "sqlite locking", "file": "store/store.go", "intents": []string{"debug"},
		"instructions": []string{"answer in plain text"}, "budget": 4000, "dao_tian_limit": 1, "include_evidence": true, "dry_run": true, "request_id": "rq_test"})
	if res.IsError {
		t.Fatal(text(res))
	}
	if got := text(res); got != want.Rendered {
		t.Errorf("text is not the rendered pack:\n%s\nwant\n%s", got, want.Rendered)
	}
	if !strings.Contains(want.Rendered, id) {
		t.Errorf("the pack does not render the promoted card %s:\n%s", id, want.Rendered)
	}
	// An agent over MCP is told the tool to call, not a CLI command.
	if got := text(res); strings.Contains(got, "palace card show") || !strings.Contains(got, "fetch a card with palace_cards get `ID`") {
		t.Errorf("the pack names the CLI, or not the palace_cards tool, for fetching a card:\n%s", got)
	}
	gotJSON, _ := json.Marshal(res.StructuredContent)
	wantJSON, _ := json.Marshal(want)
	if !jsonEqual(t, gotJSON, wantJSON) {
		t.Errorf("structured pack differs from host.Context:\n got %s\nwant %s", gotJSON, wantJSON)
	}
}

func TestContextBadRequestNamesTheField(t *testing.T) {
	s := connect(t, newPalaceEnv(t).open(t, host.Agent))
	for args, want := range map[string]string{
		`{"budget": -5}`:          "palace: budget -5 is negative: pass a size in characters (default 8000)",
		`{"dao_tian_limit": -1}`:  "palace: dao_tian_limit -1 is negative: pass 0 to leave dao_tian out",
		`{"budget": "big"}`:       `palace: argument "budget" must be an integer, got a string`,
		`{"query": "x", "k": 1}`:  `palace: argument "k" is not known to palace_context`,
		`{"instructions": "one"}`: `palace: argument "instructions" must be an array of strings, got a string`,
	} {
		var a map[string]any
		if err := json.Unmarshal([]byte(args), &a); err != nil {
			t.Fatal(err)
		}
		if got := s.fail(mcp.ToolContext, a); !strings.HasPrefix(got, want) {
			t.Errorf("%s:\n got %q\nwant %q…", args, got, want)
		}
	}
}

// TestRecordRefusesAPackThisSessionRendered: the real renderer's output is
// refused, by shape and, for lines no shape rule knows (evidence rows),
// because this session rendered them.
func TestRecordRefusesAPackThisSessionRendered(t *testing.T) {
	e := newPalaceEnv(t)
	seedPromoted(t, e.open(t, host.Human), "Open SQLite in WAL mode")
	s := connect(t, e.open(t, host.Agent))
	res := s.call(mcp.ToolContext, map[string]any{"query": "sqlite", "file": "store/store.go", "intents": []string{"debug"}, "include_evidence": true})
	pack := text(res)
	var evLine string
	for _, l := range strings.Split(pack, "\n") {
		if strings.HasPrefix(l, "- `ev_") {
			evLine = l
		}
	}
	if evLine == "" {
		t.Fatalf("the pack renders no evidence row:\n%s", pack)
	}
	for _, tc := range []struct{ content, why string }{
		{pack, "it contains a context pack palace rendered"},
		{"I read this earlier:\n" + evLine + "\n", "it repeats text this palace session rendered"},
	} {
		got := s.fail(mcp.ToolRecord, map[string]any{"content": tc.content})
		if !strings.HasPrefix(got, "palace: content is refused: "+tc.why) {
			t.Errorf("recording %q:\n got %q\nwant the reason %q", tc.content, got, tc.why)
		}
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

func TestBriefIsTheHostsBrief(t *testing.T) {
	e := newPalaceEnv(t)
	seedPromoted(t, e.open(t, host.Human), "Open SQLite in WAL mode")
	agent := e.open(t, host.Agent)
	s := connect(t, agent)
	want, err := agent.Pack().Brief(context.Background(), pack.BriefRequest{Query: "sqlite", File: "store/store.go", Intents: []string{"debug"}})
	if err != nil {
		t.Fatal(err)
	}
	res := s.call(mcp.ToolBrief, map[string]any{"query": "sqlite", "file": "store/store.go", "intents": []string{"debug"}})
	if res.IsError {
		t.Fatal(text(res))
	}
	gotJSON, _ := json.Marshal(res.StructuredContent)
	wantJSON, _ := json.Marshal(want)
	if !jsonEqual(t, gotJSON, wantJSON) {
		t.Errorf("brief differs from host.Brief:\n got %s\nwant %s", gotJSON, wantJSON)
	}
	if len(want.KeyFacts) != 1 {
		t.Errorf("the brief has %d key facts, want the promoted card", len(want.KeyFacts))
	}

	// Neither the brief nor the pack, pasted back as JSON, is evidence.
	pack := s.call(mcp.ToolContext, map[string]any{"query": "sqlite", "dry_run": true})
	packJSON, _ := json.Marshal(pack.StructuredContent)
	for what, content := range map[string]string{"a brief": text(res), "a context pack": string(packJSON)} {
		got := s.fail(mcp.ToolRecord, map[string]any{"content": "palace said: " + content})
		if !strings.HasPrefix(got, "palace: content is refused: it contains") || !strings.Contains(got, what) {
			t.Errorf("recording %s as JSON: %s", what, got)
		}
	}
}
