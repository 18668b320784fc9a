package host_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/pack"
)

// TestTeamLanesConfig: a repository's .palace/policies/lanes.json changes
// the packs of everyone working in it — lane sizes and the compact cap —
// and a broken one falls back to the defaults with the error in the pack.
func TestTeamLanesConfig(t *testing.T) {
	ctx := context.Background()
	e := newCxEnv(t)
	dir := e.repo("a", "https://github.com/acme/a")
	h := e.open(dir, host.Human)
	long := "checkpoint the WAL after bulk imports so readers do not scan a long log, and keep the checkpoint passive while a server is running"
	for _, s := range []string{long, "vacuum the store only from maintenance", "never hold the write lock while ranking"} {
		e.card(h, scoped(s, "shu"))
	}
	req := cxScopedRequest()
	req.Query = "checkpoint WAL imports vacuum store write lock"
	before, err := e.open(dir, host.Human).Pack().Context(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	inline := func(p pack.Pack) int {
		n := 0
		for _, it := range p.Items {
			if it.RenderForm == "inline_compact" || it.RenderForm == "inline_full" {
				n++
			}
		}
		return n
	}
	if inline(before) != 3 || !strings.Contains(before.Rendered, long) {
		t.Fatalf("defaults: %d inline, want 3 with the whole statement:\n%s", inline(before), before.Rendered)
	}

	pdir := filepath.Join(dir, ".palace", "policies")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(pdir, 0o755))
	must(os.WriteFile(filepath.Join(pdir, "lanes.json"), []byte(`{"core_inline_limit": 1, "scoped_inline_limit": 1, "compact_char_limit": 60}`), 0o644))
	after, err := e.open(dir, host.Human).Pack().Context(ctx, req)
	must(err)
	if inline(after) != 2 {
		t.Errorf("core and scoped limited to one each: %d inline\n%s", inline(after), after.Rendered)
	}
	if strings.Contains(after.Rendered, long) || !strings.Contains(after.Rendered, "checkpoint the WAL after bulk imports so readers do not…") {
		t.Errorf("compact cap of 60 not applied:\n%s", after.Rendered)
	}
	if after.Policy.SetHash == before.Policy.SetHash {
		t.Error("the pack's policy hash does not change with the lanes configuration")
	}

	must(os.WriteFile(filepath.Join(pdir, "lanes.json"), []byte(`{"core_inline_limt": 1}`), 0o644))
	broken, err := e.open(dir, host.Human).Pack().Context(ctx, req)
	must(err)
	if !strings.Contains(broken.Policy.Fallback, `unknown setting "core_inline_limt"`) || inline(broken) != 3 {
		t.Errorf("a broken lanes.json: fallback %q, %d inline", broken.Policy.Fallback, inline(broken))
	}
}
