package mcp_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/adoption"
	"github.com/palacehq/palace/mcp"
)

// otherRepo makes a second checkout beside e's, sharing its palace home,
// and opens a host there in mode.
func (e palaceEnv) otherRepo(t *testing.T, mode host.Mode) *host.Host {
	t.Helper()
	dir := filepath.Join(filepath.Dir(e.dir), "other")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"remote", "add", "origin", "git@github.com:acme/other.git"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	h, err := host.Open(context.Background(), host.Options{Home: e.home, Cwd: dir, Mode: mode, Actor: "tester", Now: func() time.Time { return fixedNow }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// An agent never reads another repository's cards through all_repos
// unless a person allowed it for its workspace in human mode; a person's
// deny takes it back. Signals on another repository's cards are refused.
func TestAgentAllReposNeedsAPersonsPermission(t *testing.T) {
	e := newPalaceEnv(t)
	other := e.otherRepo(t, host.Human)
	foreign := seedCards(t, other, "Rotate the other team's signing keys on Mondays")[0]
	seedCards(t, e.open(t, host.Human), "Open SQLite in WAL mode")
	agent := connect(t, e.open(t, host.Agent))

	calls := []struct {
		tool string
		args map[string]any
	}{
		{mcp.ToolContext, map[string]any{"query": "signing keys", "all_repos": true}},
		{mcp.ToolBrief, map[string]any{"query": "signing keys", "all_repos": true}},
		{mcp.ToolCards, map[string]any{"anchor": "all", "all_repos": true}},
		{mcp.ToolCards, map[string]any{"all_repos": true}},
		{mcp.ToolCards, map[string]any{"action": "get", "id": foreign, "all_repos": true}},
		{mcp.ToolCards, map[string]any{"action": "events", "id": foreign, "all_repos": true}},
	}
	for _, c := range calls {
		msg := agent.fail(c.tool, c.args)
		if !strings.Contains(msg, "agent mode does not read other repositories' memory unless a person allowed it") || !strings.Contains(msg, "palace workspace allow-all-repos") {
			t.Errorf("%s %v: %s", c.tool, c.args, msg)
		}
	}
	// Without all_repos an agent reads its own memory as before.
	if cards := agent.ok(mcp.ToolCards, map[string]any{})["cards"].([]any); len(cards) != 1 {
		t.Errorf("own cards: %v", cards)
	}
	// A signal on the other repository's card is refused and not recorded.
	msg := agent.fail(mcp.ToolFeedback, map[string]any{"signal": "rejected", "card_id": foreign, "note": "wrong"})
	if !strings.Contains(msg, "is not in this checkout's memory") {
		t.Errorf("feedback on another repository's card: %s", msg)
	}
	if st, err := other.Adoption().Stats(context.Background(), adoption.Filter{}); err != nil || st.Total != 0 {
		t.Errorf("signals recorded: %+v, %v", st, err)
	}

	// A person allows it for this workspace: the same calls read the other
	// repository, labelled.
	person := e.open(t, host.Human)
	if acc, err := person.SetAllRepos(context.Background(), true, "cross-team review"); err != nil || !acc.AllRepos || acc.Decision.Actor != "tester" {
		t.Fatalf("allow: %+v, %v", acc, err)
	}
	for _, c := range calls {
		agent.ok(c.tool, c.args)
	}
	p := agent.pack(map[string]any{"query": "rotate signing keys mondays", "all_repos": true})
	if i, _ := p.rank(foreign); i == len(p.Items) {
		t.Errorf("allowed: the other repository's card is not in the pack: %+v", p.Items)
	}
	// The agent cannot grant itself anything; a person's deny takes it back.
	if _, err := e.open(t, host.Agent).SetAllRepos(context.Background(), true, ""); host.KindOf(err) != host.KindMode {
		t.Errorf("agent allows: %v, want KindMode", err)
	}
	if _, err := person.SetAllRepos(context.Background(), false, ""); err != nil {
		t.Fatal(err)
	}
	for _, c := range calls {
		agent.fail(c.tool, c.args)
	}
}
