package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/audit"
	"github.com/palacehq/palace/mcp"
)

// The tool sets of each mode, sorted as tools/list orders them.
var (
	agentTools = []string{mcp.ToolBrief, mcp.ToolCards, mcp.ToolContext, mcp.ToolDistill, mcp.ToolFeedback, mcp.ToolGate, mcp.ToolLink, mcp.ToolMailboxFile, mcp.ToolRecord, mcp.ToolResearch, mcp.ToolVerify}
	humanOnly  = []string{mcp.ToolAuditAction, mcp.ToolDemote, mcp.ToolPromote, mcp.ToolPublish, mcp.ToolResolve, mcp.ToolRetire}
)

func TestToolsListByMode(t *testing.T) {
	e := newPalaceEnv(t)
	humanTools := slices.Sorted(slices.Values(append(slices.Clone(agentTools), humanOnly...)))
	for _, tc := range []struct {
		mode host.Mode
		want []string
	}{
		{host.Agent, agentTools},
		{host.Human, humanTools},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			s := connect(t, e.open(t, tc.mode))
			if got := s.toolNames(); !slices.Equal(got, tc.want) {
				t.Errorf("tools/list = %v\nwant        %v", got, tc.want)
			}
		})
	}
}

func TestHumanToolsInAgentModeAreInvalidParams(t *testing.T) {
	s := connect(t, newPalaceEnv(t).open(t, host.Agent))
	for _, name := range humanOnly {
		t.Run(name, func(t *testing.T) {
			err := s.on(t).rpcError(name, map[string]any{"id": "kc_x", "reason": "r"})
			if err.Code != jsonrpc.CodeInvalidParams {
				t.Errorf("code %d, want %d", err.Code, jsonrpc.CodeInvalidParams)
			}
			if want := fmt.Sprintf("Tool %q not available in agent mode", name); err.Message != want {
				t.Errorf("message %q, want %q", err.Message, want)
			}
		})
	}
	// A name that is no tool at all keeps the SDK's answer.
	if err := s.rpcError("palace_nope", nil); err.Code != jsonrpc.CodeInvalidParams || !strings.Contains(err.Message, "unknown tool") {
		t.Errorf("unknown tool: %d %q", err.Code, err.Message)
	}
}

func TestEveryToolDescribesItselfForAModel(t *testing.T) {
	s := connect(t, newPalaceEnv(t).open(t, host.Human))
	res, err := s.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range res.Tools {
		if len(tl.Description) < 120 {
			t.Errorf("%s: description %q is too short to tell a model when to call it", tl.Name, tl.Description)
		}
		schema, ok := tl.InputSchema.(map[string]any)
		if !ok || schema["type"] != "object" || schema["additionalProperties"] != false {
			t.Errorf("%s: input schema %v is not a closed object", tl.Name, tl.InputSchema)
			continue
		}
		props, _ := schema["properties"].(map[string]any)
		for name, p := range props {
			if d, _ := p.(map[string]any)["description"].(string); d == "" {
				t.Errorf("%s.%s has no description", tl.Name, name)
			}
		}
		if tl.Annotations == nil || tl.Annotations.Title == "" {
			t.Errorf("%s has no annotations", tl.Name)
		}
	}
}

func TestAgentDistillSchemaHidesDirectWrite(t *testing.T) {
	e := newPalaceEnv(t)
	for _, tc := range []struct {
		mode host.Mode
		want bool
	}{{host.Agent, false}, {host.Human, true}} {
		s := connect(t, e.open(t, tc.mode))
		props := s.tool(mcp.ToolDistill).InputSchema.(map[string]any)["properties"].(map[string]any)
		if _, got := props["direct"]; got != tc.want {
			t.Errorf("%s mode: distill offers direct = %v, want %v", tc.mode, got, tc.want)
		}
	}
}

func TestRecordDistillGateRoundTrip(t *testing.T) {
	s := connect(t, newPalaceEnv(t).open(t, host.Agent))
	ev := s.ok(mcp.ToolRecord, map[string]any{"content": "tests flake with 'database is locked' without WAL", "field": "storage", "source_ref": "ci#12", "tags": []string{"sqlite"}})
	if ev["provenance"] != "runtime" || ev["actor_type"] != "agent" || ev["source_ref"] != "ci#12" {
		t.Errorf("recorded %v: want runtime provenance by an agent", ev)
	}
	card := s.ok(mcp.ToolDistill, map[string]any{
		"statement": "Open SQLite in WAL mode", "tier": "qi", "field": "storage",
		"supporting": []string{ev["id"].(string)}, "scope_paths": []string{"store/**"}, "intents": []string{"debug"},
	})
	if card["status"] != "candidate" || card["authoritative"] != false {
		t.Errorf("distilled %v, want a non-authoritative candidate", card)
	}
	if scope := card["scope"].(map[string]any); fmt.Sprint(scope["paths"]) != "[store/**]" {
		t.Errorf("scope %v, want paths [store/**]", scope)
	}
	gate := s.ok(mcp.ToolGate, map[string]any{"id": card["id"]})
	if gate["allow"] != false || fmt.Sprint(gate["missing"]) != "map[verification:1]" {
		t.Errorf("gate %v: want a denial missing one verification", gate)
	}
	if r := gate["reviewer"].(map[string]any); r["type"] != "agent" {
		t.Errorf("gate reviewer %v: in agent mode the reviewer is the agent", r)
	}
	// The gate wrote nothing: the card is still a candidate with one event.
	got := s.ok(mcp.ToolCards, map[string]any{"action": "events", "id": card["id"]})
	if evs := got["events"].([]any); len(evs) != 1 || evs[0].(map[string]any)["type"] != "created" {
		t.Errorf("events after gate: %v", evs)
	}
}

func TestHumanPromoteThroughMCP(t *testing.T) {
	s := connect(t, newPalaceEnv(t).open(t, host.Human))
	seen, fixed := s.record("without WAL: database is locked"), s.record("with WAL: 50 of 50 runs pass")
	card := s.ok(mcp.ToolDistill, map[string]any{"statement": "Open SQLite in WAL mode", "tier": "qi", "supporting": []string{seen}})
	id := card["id"].(string)

	// Denied first: the gate's reasons come with the CLI's message, and the
	// gate's answer follows as JSON.
	msg := s.fail(mcp.ToolPromote, map[string]any{"id": id, "reason": "looks right"})
	if !strings.HasPrefix(msg, "palace: gate denied promoting "+id+" to promoted\n  - ") || !strings.Contains(msg, `"allow":false`) {
		t.Errorf("denied promote says:\n%s", msg)
	}
	res := s.ok(mcp.ToolPromote, map[string]any{"id": id, "reason": "verified", "verification": []string{fixed}})
	if c := res["card"].(map[string]any); c["status"] != "promoted" || res["event"].(map[string]any)["type"] != "promoted" {
		t.Errorf("promote result %v", res)
	}
	counter := s.record("on NFS WAL corrupts the database")
	res = s.ok(mcp.ToolDemote, map[string]any{"id": id, "reason": "NFS", "counterexample": []string{counter}})
	if res["card"].(map[string]any)["status"] != "demoted" {
		t.Errorf("demote result %v", res)
	}
	res = s.ok(mcp.ToolRetire, map[string]any{"id": id, "reason": "superseded"})
	if res["card"].(map[string]any)["status"] != "retired" {
		t.Errorf("retire result %v", res)
	}
	if msg := s.fail(mcp.ToolPublish, map[string]any{"id": id, "to": "repo", "reason": "r"}); !strings.Contains(msg, "only authoritative cards") {
		t.Errorf("publishing a retired card: %s", msg)
	}
}

func TestPublishThroughMCP(t *testing.T) {
	s := connect(t, newPalaceEnv(t).open(t, host.Human))
	seen, fixed := s.record("seen"), s.record("verified")
	card := s.ok(mcp.ToolDistill, map[string]any{"statement": "Run make lint before pushing", "tier": "shu", "supporting": []string{seen}, "verification": []string{fixed}})
	s.ok(mcp.ToolPromote, map[string]any{"id": card["id"], "reason": "ok"})
	res := s.ok(mcp.ToolPublish, map[string]any{"id": card["id"], "to": "repo", "reason": "holds in every checkout"})
	cp := res["copy"].(map[string]any)
	if cp["origin_card"] != card["id"] || cp["anchor"].(map[string]any)["kind"] != "repo" {
		t.Errorf("published copy %v", cp)
	}
}

func TestCardsTool(t *testing.T) {
	s := connect(t, newPalaceEnv(t).open(t, host.Agent))
	ev := s.record("evidence")
	var ids []string
	for i := range 3 {
		c := s.ok(mcp.ToolDistill, map[string]any{"statement": fmt.Sprintf("rule %d", i), "tier": "qi", "supporting": []string{ev}})
		ids = append(ids, c["id"].(string))
	}
	if got := s.ok(mcp.ToolCards, nil)["cards"].([]any); len(got) != 3 {
		t.Errorf("list: %d cards, want 3", len(got))
	}
	if got := s.ok(mcp.ToolCards, map[string]any{"action": "list", "limit": 2})["cards"].([]any); len(got) != 2 {
		t.Errorf("list limit 2: %d cards", len(got))
	}
	if got := s.ok(mcp.ToolCards, map[string]any{"tier": "dao_tian"})["cards"].([]any); len(got) != 0 {
		t.Errorf("list tier dao_tian: %v, want none", got)
	}
	got := s.ok(mcp.ToolCards, map[string]any{"action": "get", "id": ids[1]})
	if got["statement"] != "rule 1" || len(got["links"].([]any)) != 1 {
		t.Errorf("get: %v", got)
	}
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"action": "get"}, "palace: id is required for action get: the card id (kc_…)"},
		{map[string]any{"action": "get", "id": "kc_nope"}, "palace: no card kc_nope: list them with palace_cards (action list, all_repos true)"},
		{map[string]any{"action": "get", "id": ev}, "palace: no card " + ev + ": " + ev + " is an evidence id: use a card id (kc_…) instead"},
		{map[string]any{"action": "events", "id": ids[0], "tier": "qi"}, "palace: tier, status, anchor, field and limit filter action list; action events takes only id"},
		{map[string]any{"action": "list", "id": ids[0]}, "palace: id is for get and events: list filters by tier, status, anchor and field"},
		{map[string]any{"action": "delete"}, `palace: action "delete" is not valid: use list, get or events`},
		{map[string]any{"status": "gold"}, `palace: status "gold" is not valid: use one of candidate, promoted, canonical, demoted, retired`},
		{map[string]any{"limit": -1}, "palace: limit -1 is negative: pass 0 for no limit"},
		// Reading every repository is asked for explicitly.
		{map[string]any{"anchor": "all"}, "palace: anchor all reads every repository's memory: ask for it explicitly with all_repos"},
	} {
		if got := s.fail(mcp.ToolCards, tc.args); got != tc.want {
			t.Errorf("%v:\n got %q\nwant %q", tc.args, got, tc.want)
		}
	}
}

func TestBadArgumentsNameTheField(t *testing.T) {
	s := connect(t, newPalaceEnv(t).open(t, host.Agent))
	for _, tc := range []struct {
		name, tool string
		args       any
		want       string
	}{
		{"unknown argument", mcp.ToolRecord, map[string]any{"content": "x", "contnet": "y"},
			`palace: argument "contnet" is not known to palace_record: its arguments are content, field, domain, provenance, source_ref, tags, anchor`},
		{"wrong type", mcp.ToolRecord, map[string]any{"content": 42},
			`palace: argument "content" must be a string, got a number`},
		{"wrong list item", mcp.ToolRecord, map[string]any{"content": "x", "tags": []any{"ok", 7}},
			`palace: argument "tags" must be an array of strings, and one item is a number`},
		{"list as string", mcp.ToolDistill, map[string]any{"statement": "s", "tier": "qi", "supporting": "ev_1"},
			`palace: argument "supporting" must be an array of strings, got a string`},
		{"integer as fraction", mcp.ToolCards, map[string]any{"limit": 1.5},
			`palace: argument "limit" must be an integer, got a number 1.5`},
		{"missing content", mcp.ToolRecord, map[string]any{},
			"palace: content is empty: pass the content argument"},
		{"bad enum", mcp.ToolRecord, map[string]any{"content": "x", "provenance": "dream"},
			`palace: provenance "dream" is not valid: use one of runtime, research, human`},
		{"missing tier", mcp.ToolDistill, map[string]any{"statement": "s", "supporting": []string{"ev_1"}},
			"palace: tier is required: use one of dao_tian, dao_ren, shu, qi"},
		{"missing supporting", mcp.ToolDistill, map[string]any{"statement": "s", "tier": "qi"},
			"palace: at least one evidence id in argument \"supporting\" is required: record the evidence first with palace_record"},
		{"unknown evidence", mcp.ToolDistill, map[string]any{"statement": "s", "tier": "qi", "supporting": []string{"ev_nope"}},
			"palace: supporting ev_nope: no such evidence; record it first with palace_record"},
		{"gate of nothing", mcp.ToolGate, map[string]any{"id": "kc_nope"},
			"palace: no card kc_nope: list them with palace_cards (action list, all_repos true)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := s.on(t).fail(tc.tool, tc.args); got != tc.want {
				t.Errorf("\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestAgentCannotDirectWrite(t *testing.T) {
	s := connect(t, newPalaceEnv(t).open(t, host.Agent))
	ev := s.record("evidence")
	got := s.fail(mcp.ToolDistill, map[string]any{"statement": "s", "tier": "qi", "supporting": []string{ev}, "direct": true, "status": "promoted"})
	if want := "palace: distill direct is refused in agent mode: only a human may distill direct (mode is fixed by mode/PALACE_MODE=agent)"; got != want {
		t.Errorf("\n got %q\nwant %q", got, want)
	}
	if cards := s.ok(mcp.ToolCards, map[string]any{})["cards"].([]any); len(cards) != 0 {
		t.Errorf("a refused direct write left cards: %v", cards)
	}
}

// TestConcurrentCalls sends many calls at once on one session: each answer
// must be the answer to its own call, whatever order they complete in.
func TestConcurrentCalls(t *testing.T) {
	s := connect(t, newPalaceEnv(t).open(t, host.Agent))
	seed := s.record("seed evidence")
	card := s.ok(mcp.ToolDistill, map[string]any{"statement": "seed rule", "tier": "qi", "supporting": []string{seed}})
	const n = 48
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for i := range n {
		wg.Go(func() {
			var res *sdk.CallToolResult
			var err error
			switch i % 3 {
			case 0:
				content := fmt.Sprintf("concurrent evidence %d", i)
				res, err = s.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: mcp.ToolRecord, Arguments: map[string]any{"content": content}})
				if err == nil && !res.IsError && structured(t, res)["content"] != content {
					errs <- fmt.Sprintf("call %d got another call's answer: %v", i, structured(t, res))
				}
			case 1:
				res, err = s.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: mcp.ToolGate, Arguments: map[string]any{"id": card["id"]}})
				if err == nil && !res.IsError && structured(t, res)["card_id"] != card["id"] {
					errs <- fmt.Sprintf("gate %d answered for %v", i, structured(t, res)["card_id"])
				}
			case 2:
				id := fmt.Sprintf("kc_missing%d", i)
				res, err = s.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: mcp.ToolCards, Arguments: map[string]any{"action": "get", "id": id}})
				if err == nil && (!res.IsError || !strings.Contains(text(res), id)) {
					errs <- fmt.Sprintf("get %d: %s", i, text(res))
				}
			}
			if err != nil {
				errs <- fmt.Sprintf("call %d: %v", i, err)
			} else if res.IsError && i%3 != 2 {
				errs <- fmt.Sprintf("call %d: %s", i, text(res))
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	ev := s.ok(mcp.ToolCards, map[string]any{"action": "get", "id": card["id"]})
	if ev["status"] != "candidate" {
		t.Errorf("card after concurrent gates: %v", ev["status"])
	}
}

func TestAuditActionThroughMCP(t *testing.T) {
	e := newPalaceEnv(t)
	s := connect(t, e.open(t, host.Human))
	seen, fixed := s.record("seen"), s.record("verified")
	card := s.ok(mcp.ToolDistill, map[string]any{"statement": "Run make lint before pushing", "tier": "shu", "supporting": []string{seen}, "verification": []string{fixed}})
	id := card["id"].(string)
	s.ok(mcp.ToolPromote, map[string]any{"id": id, "reason": "ok"})

	res := s.ok(mcp.ToolAuditAction, map[string]any{"id": id, "action": "set_persistence", "value": "protected", "reason": "keeps biting us"})
	if res["card"].(map[string]any)["persistence"] != "protected" || res["event"].(map[string]any)["type"] != "updated" {
		t.Errorf("set_persistence: %v", res)
	}
	res = s.ok(mcp.ToolAuditAction, map[string]any{"id": id, "action": "rescope", "scope_paths": []string{"cmd/**"}})
	if sc := res["card"].(map[string]any)["scope"].(map[string]any); fmt.Sprint(sc["paths"]) != "[cmd/**]" {
		t.Errorf("rescope: scope %v", sc)
	}
	res = s.ok(mcp.ToolAuditAction, map[string]any{"id": id, "action": "rescope", "value": "none"})
	if sc := res["card"].(map[string]any)["scope"].(map[string]any); len(sc["paths"].([]any)) != 0 {
		t.Errorf("rescope none: scope %v", sc)
	}
	for args, want := range map[string]string{
		`{"id": "` + id + `", "action": "polish"}`:                                `palace: action "polish" is not valid: use one of rescope, retrigger, revoke, set_expiry, set_review_after, mark_foundational, prefer_compact, set_persistence, set_render_pref`,
		`{"id": "` + id + `", "action": "revoke"}`:                                "palace: reason is required to revoke: say why the card no longer holds",
		`{"id": "` + id + `", "action": "set_persistence", "value": "protected"}`: "palace: card " + id + " already has",
	} {
		var a map[string]any
		if err := json.Unmarshal([]byte(args), &a); err != nil {
			t.Fatal(err)
		}
		if got := s.fail(mcp.ToolAuditAction, a); !strings.HasPrefix(got, want) {
			t.Errorf("%s:\n got %q\nwant %q…", args, got, want)
		}
	}
}

// TestCardsGetIsAView: fetching a card by id (what a reference line in a
// pack asks for) counts as a view, as `palace card show` does; list and
// events do not.
func TestCardsGetIsAView(t *testing.T) {
	h := newPalaceEnv(t).open(t, host.Human)
	s := connect(t, h)
	ev := s.record("evidence")
	card := s.ok(mcp.ToolDistill, map[string]any{"statement": "Views warm a card", "tier": "qi", "supporting": []string{ev},
		"direct": true, "status": "promoted"})
	id := card["id"].(string)
	s.ok(mcp.ToolCards, nil)
	s.ok(mcp.ToolCards, map[string]any{"action": "events", "id": id})
	for range 2 {
		s.ok(mcp.ToolCards, map[string]any{"action": "get", "id": id})
	}
	rep, err := h.Audit(context.Background(), audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rep.Rows {
		if row.ID == id {
			if row.Counts30d.Viewed != 2 {
				t.Fatalf("viewed = %d after two gets, want 2", row.Counts30d.Viewed)
			}
			return
		}
	}
	t.Fatalf("card %s not in the audit", id)
}

// TestResolveThroughMCP: a counterexample linked to a promoted card
// contests it (it leaves the inline lanes); palace_resolve with newer
// verification closes the contest, and is offered in human mode only.
func TestResolveThroughMCP(t *testing.T) {
	e := newPalaceEnv(t)
	tick := fixedNow
	clock := func() time.Time { tick = tick.Add(time.Minute); return tick }
	h, err := host.Open(context.Background(), host.Options{Home: e.home, Cwd: e.dir, Mode: host.Human, Actor: "tester", Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	s := connect(t, h)
	seen, fixed := s.record("without WAL: database is locked"), s.record("with WAL: 50 of 50 runs pass")
	card := s.ok(mcp.ToolDistill, map[string]any{"statement": "Open SQLite in WAL mode", "tier": "qi", "supporting": []string{seen}, "verification": []string{fixed}})
	id := card["id"].(string)
	s.ok(mcp.ToolPromote, map[string]any{"id": id, "reason": "verified"})
	counter := s.record("on NFS WAL corrupts the database")
	link := s.ok(mcp.ToolLink, map[string]any{"id": id, "role": "counterexample", "evidence_id": counter})
	if link["contest"] == nil {
		t.Fatalf("a counterexample on a promoted card did not contest it: %v", link)
	}
	if msg := s.fail(mcp.ToolResolve, map[string]any{"id": id, "reason": "old news", "verification": []string{fixed}}); !strings.Contains(msg, "resolve") {
		t.Errorf("resolving with older verification: %s", msg)
	}
	newer := s.record("on local disks WAL holds: 50 of 50 runs pass after the NFS report")
	res := s.ok(mcp.ToolResolve, map[string]any{"id": id, "reason": "NFS is not supported", "verification": []string{newer}})
	if res["card"].(map[string]any)["status"] != "promoted" {
		t.Errorf("resolve result %v", res)
	}
	if s.ok(mcp.ToolLink, map[string]any{"id": id, "role": "verification", "evidence_id": newer})["contest"] != nil {
		t.Errorf("the card is still contested after resolve")
	}
	agent := connect(t, e.open(t, host.Agent))
	if slices.Contains(agent.toolNames(), mcp.ToolResolve) {
		t.Errorf("palace_resolve is offered in agent mode")
	}
}
