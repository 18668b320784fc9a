package pack_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/internal/jobtest"
	"github.com/palacehq/palace/host/pack"
	"github.com/palacehq/palace/policies"
)

// teamPolicies makes fx read its policy set as host does, from the
// checkout's .palace/policies on every request, and returns that folder.
func teamPolicies(t *testing.T, fx *fixture) string {
	t.Helper()
	dir := filepath.Join(fx.Dir, ".palace", "policies")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	fx.Policies = func(ctx context.Context) (*policies.Set, error) {
		return policies.Load(ctx, policies.Sources{RepoDir: dir, RepoRoot: fx.Dir}, policies.Options{})
	}
	fx.build()
	return dir
}

func inline(p pack.Pack) int {
	n := 0
	for _, it := range p.Items {
		if it.RenderForm == domain.FormInlineCompact || it.RenderForm == domain.FormInlineFull {
			n++
		}
	}
	return n
}

// TestContextFollowsTheTeamLanesConfig: lanes.json limits the inline
// items and the compact length, and changes the pack's policy hash; a
// broken one leaves the defaults deciding, and the pack says why.
func TestContextFollowsTheTeamLanesConfig(t *testing.T) {
	fx := newFixture(t, jobtest.Options{Git: true})
	dir := teamPolicies(t, fx)
	long := "checkpoint the WAL after bulk imports so readers do not scan a long log, and keep the checkpoint passive while a server is running"
	for _, s := range []string{long, "vacuum the store only from maintenance", "never hold the write lock while ranking"} {
		fx.card(t, scoped(s, domain.TierShu))
	}
	req := scopedRequest()
	req.Query = "checkpoint WAL imports vacuum store write lock"
	before := fx.context(t, req)
	if inline(before) != 3 || !strings.Contains(before.Rendered, long) {
		t.Fatalf("defaults: %d inline, want 3 with the whole statement:\n%s", inline(before), before.Rendered)
	}
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("lanes.json", `{"core_inline_limit": 1, "scoped_inline_limit": 1, "compact_char_limit": 60}`)
	after := fx.context(t, req)
	if inline(after) != 2 {
		t.Errorf("core and scoped limited to one each: %d inline\n%s", inline(after), after.Rendered)
	}
	if strings.Contains(after.Rendered, long) || !strings.Contains(after.Rendered, "checkpoint the WAL after bulk imports so readers do not…") {
		t.Errorf("compact cap of 60 not applied:\n%s", after.Rendered)
	}
	if after.Policy.SetHash == before.Policy.SetHash {
		t.Error("the pack's policy hash does not change with the lanes configuration")
	}
	write("lanes.json", `{"core_inline_limt": 1}`)
	broken := fx.context(t, req)
	if !strings.Contains(broken.Policy.Fallback, `unknown setting "core_inline_limt"`) || inline(broken) != 3 {
		t.Errorf("a broken lanes.json: fallback %q, %d inline", broken.Policy.Fallback, inline(broken))
	}
}

// TestContextTeamScopePolicyMalformed: a team scope policy whose answer
// is malformed does not fail the pack: the default decides, and the scope
// decision names the file.
func TestContextTeamScopePolicyMalformed(t *testing.T) {
	fx := newFixture(t, jobtest.Options{Git: true})
	dir := teamPolicies(t, fx)
	id := fx.card(t, scoped("checkpoint the WAL after imports", domain.TierShu))
	if err := os.WriteFile(filepath.Join(dir, "scope.rego"), []byte("package palace.scope\n\nimport rego.v1\n\ndecision := {\"nobody\": true}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := fx.context(t, scopedRequest())
	if p.Policy.Fallback != "" || !strings.Contains(p.Policy.Scope.Fallback, "scope.rego") || p.Policy.Scope.Hash == "" {
		t.Errorf("policy = %+v, want the scope decision to name scope.rego", p.Policy)
	}
	if it, ok := item(p, id); !ok || it.Lane != domain.LaneCore {
		t.Errorf("the default did not decide: items %+v", p.Items)
	}
}
