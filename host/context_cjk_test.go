package host_test

import (
	"context"
	"testing"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/pack"
)

// A query in Chinese finds the card whose statement holds its word inside
// a run of text written without spaces.
func TestContextFindsCJKWordsInsideRuns(t *testing.T) {
	e := newCxEnv(t)
	h := e.open(e.repo("r", "https://example.com/o/r.git"), host.Human)
	wal := e.card(h, cxCard{statement: "使用WAL模式避免数据库锁", tier: "shu", anchor: "repo"})
	e.card(h, cxCard{statement: "提交前运行全部测试", tier: "shu", anchor: "repo"})
	p, err := h.Pack().Context(context.Background(), pack.ContextRequest{Query: "数据库锁", DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	it, ok := item(p, wal)
	if !ok || it.RenderForm != domain.FormInlineCompact || it.Relevance < 0.5 {
		t.Fatalf("the WAL card for 数据库锁: %+v (found %v), items %v", it, ok, itemIDs(p))
	}
	if len(p.Items) != 1 {
		t.Errorf("items %v, want the WAL card alone", itemIDs(p))
	}
}
