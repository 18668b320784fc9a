package mcp_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/adoption"
	"github.com/palacehq/palace/host/intake"
	"github.com/palacehq/palace/mcp"
)

// seedCards writes promoted cards (human, direct) and returns their ids.
func seedCards(t *testing.T, h *host.Host, statements ...string) []string {
	t.Helper()
	ctx := context.Background()
	var ids []string
	for _, s := range statements {
		ev, err := h.Intake().Record(ctx, intake.RecordRequest{Content: "seen: " + s, Field: "storage", SourceRef: "ci#7"})
		if err != nil {
			t.Fatal(err)
		}
		c, err := h.Distill(ctx, intake.DistillRequest{Statement: s, Tier: "shu", Field: "storage", Supporting: []string{ev.ID},
			Direct: true, Status: "promoted", Reason: "seed"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	return ids
}

type packView struct {
	RequestID string `json:"request_id"`
	Items     []struct {
		ID       string `json:"id"`
		Salience int    `json:"salience"`
		Lane     string `json:"lane"`
	} `json:"items"`
}

func (p packView) rank(id string) (int, int) {
	for i, it := range p.Items {
		if it.ID == id {
			return i, it.Salience
		}
	}
	return len(p.Items), -1
}

func (s *session) pack(args map[string]any) packView {
	s.t.Helper()
	b, err := json.Marshal(s.ok(mcp.ToolContext, args))
	if err != nil {
		s.t.Fatal(err)
	}
	var p packView
	if err := json.Unmarshal(b, &p); err != nil {
		s.t.Fatal(err)
	}
	return p
}

// An agent session over MCP: a pack, feedback on two of its cards and a
// miss; the next identical request ranks the used card at least as high
// and the rejected one lower, and the review lists the miss.
func TestFeedbackChangesTheNextIdenticalPack(t *testing.T) {
	e := newPalaceEnv(t)
	seedCards(t, e.open(t, host.Human),
		"Open SQLite in WAL mode so readers never block a write",
		"Set a SQLite busy timeout before the first write",
		"Keep SQLite write transactions short and IMMEDIATE")
	agent := e.open(t, host.Agent)
	s := connect(t, agent)
	req := map[string]any{"query": "sqlite write", "file": "store/store.go"}
	first := s.pack(req)
	if first.RequestID == "" || len(first.Items) < 3 {
		t.Fatalf("the pack has request id %q and %d items, want one and 3", first.RequestID, len(first.Items))
	}
	// The standing the signals are measured against: the same request
	// after the first pack's own telemetry (a dry run writes nothing).
	dry := map[string]any{"query": req["query"], "file": req["file"], "dry_run": true}
	before := s.pack(dry)
	used, rejected := before.Items[1].ID, before.Items[0].ID
	usedRank, usedSal := before.rank(used)
	rejRank, rejSal := before.rank(rejected)

	got := s.ok(mcp.ToolFeedback, map[string]any{"signal": "used", "card_id": used, "request_id": first.RequestID, "note": "followed it"})
	if got["written"] != true || got["quality"] != "ready" {
		t.Fatalf("used: %v", got)
	}
	s.ok(mcp.ToolFeedback, map[string]any{"signal": "rejected", "card_id": rejected, "request_id": first.RequestID, "note": "not about this code path"})
	s.ok(mcp.ToolFeedback, map[string]any{"signal": "miss", "request_id": first.RequestID, "note": "how to recover from SQLITE_BUSY in a read transaction"})
	// A thin signal is refused with the reason, and nothing is written.
	if msg := s.fail(mcp.ToolFeedback, map[string]any{"signal": "rejected", "card_id": used}); !strings.Contains(msg, "allow_warnings") {
		t.Errorf("thin signal: %s", msg)
	}

	next := s.pack(dry)
	if r, sal := next.rank(used); r > usedRank || sal <= usedSal {
		t.Errorf("used card %s: rank %d salience %d, was %d and %d: want at least as high, and warmer", used, r, sal, usedRank, usedSal)
	}
	if r, sal := next.rank(rejected); r <= rejRank || sal >= rejSal {
		t.Errorf("rejected card %s: rank %d salience %d, was %d and %d: want lower", rejected, r, sal, rejRank, rejSal)
	}
	// The third card, about which nothing was said, keeps its salience.
	other := before.Items[2].ID
	if _, a := before.rank(other); a != func() int { _, b := next.rank(other); return b }() {
		t.Errorf("card %s without signals changed salience", other)
	}

	rev, err := agent.Adoption().Review(context.Background(), adoption.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if rev.Total != 3 || len(rev.Misses) != 1 || rev.Misses[0].Needs[0].Note != "how to recover from SQLITE_BUSY in a read transaction" ||
		!slices.Contains(rev.Misses[0].Needs[0].RequestIDs, first.RequestID) {
		t.Errorf("review: total %d, misses %+v", rev.Total, rev.Misses)
	}
	if len(rev.TurnedDown) != 1 || rev.TurnedDown[0].ID != rejected {
		t.Errorf("review turned down %+v, want %s", rev.TurnedDown, rejected)
	}
	// Signals never change a card's status.
	for _, id := range []string{used, rejected} {
		c := s.ok(mcp.ToolCards, map[string]any{"action": "get", "id": id})
		if c["status"] != "promoted" {
			t.Errorf("%s status %v after signals, want promoted", id, c["status"])
		}
	}
}

func TestResearchToolModes(t *testing.T) {
	e := newPalaceEnv(t)
	agent := e.open(t, host.Agent)
	s := connect(t, agent)
	report := map[string]any{"report_id": "rr-wal", "title": "WAL notes",
		"sources":            []any{map[string]any{"id": "s1", "url": "https://sqlite.org/wal.html", "title": "WAL"}},
		"findings":           []any{map[string]any{"id": "f1", "content": "WAL readers do not block writers", "source": "s1", "field": "storage"}},
		"candidate_insights": []any{map[string]any{"statement": "Use WAL mode", "findings": []any{"f1"}}}}
	plan := s.ok(mcp.ToolResearch, map[string]any{"action": "plan", "report": report})
	ev := plan["evidence"].([]any)[0].(map[string]any)["id"].(string)
	sugg := plan["suggestions"].([]any)[0].(map[string]any)
	if plan["new"] != float64(1) || plan["written"] != float64(0) || !slices.Contains(sugg["supporting"].([]any), any(ev)) {
		t.Errorf("plan: %v", plan)
	}
	msg := s.fail(mcp.ToolResearch, map[string]any{"action": "ingest", "report": report})
	if !strings.Contains(msg, "palace.research refused") {
		t.Errorf("agent ingest: %s", msg)
	}
	if _, err := agent.ShowEvidence(context.Background(), ev, false); err == nil {
		t.Errorf("a refused ingest wrote %s", ev)
	}
	bad := map[string]any{"report_id": "rr-x", "title": "t", "findings": []any{map[string]any{"id": "f1", "content": "c"}}}
	if msg := s.fail(mcp.ToolResearch, map[string]any{"action": "validate", "report": bad}); !strings.Contains(msg, "findings[0].source") {
		t.Errorf("bad report: %s", msg)
	}
	human := connect(t, e.open(t, host.Human))
	if got := human.ok(mcp.ToolResearch, map[string]any{"action": "ingest", "report": report}); got["written"] != float64(1) {
		t.Errorf("human ingest: %v", got)
	}
}
