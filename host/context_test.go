package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/pack"
)

func TestContextDeterministic(t *testing.T) {
	ctx := context.Background()
	e := newCxEnv(t)
	dir := e.repo("a", "https://github.com/acme/a")
	h := e.open(dir, host.Human)
	for _, s := range []string{"checkpoint the WAL after imports", "never hold a write lock across network calls", "index foreign keys"} {
		c := scoped(s, "shu")
		c.content = "Detail for: " + s
		c.renderPref = "inline_full"
		e.card(h, c)
	}
	e.card(h, cxCard{statement: "prefer small commits", tier: "qi"})
	req := cxScopedRequest()
	req.Query = "WAL lock"
	req.Budget = 700
	req.IncludeEvidence = true
	req.Instructions = []string{"be brief"}
	marshal := func(h *host.Host, req pack.ContextRequest) []byte {
		t.Helper()
		p, err := h.Pack().Context(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	one, two := marshal(h, req), marshal(h, req)
	if !bytes.Equal(one, two) {
		t.Fatalf("two dry runs differ:\n%s\n%s", one, two)
	}
	if bytes.Contains(one, []byte(`"request_id"`)) {
		t.Error("a dry run without --request-id carries a request id")
	}
	// A real run with a fixed id on two copies of the same database.
	h.Close()
	copyHome := filepath.Join(e.root, "home2")
	if err := os.MkdirAll(copyHome, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"palace.db", "palace.db-wal"} {
		b, err := os.ReadFile(filepath.Join(e.home, f))
		if err != nil {
			continue
		}
		if err := os.WriteFile(filepath.Join(copyHome, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	req.DryRun, req.RequestID = false, "rq_fixed"
	first := marshal(e.open(dir, host.Human), req)
	e.home = copyHome
	second := marshal(e.open(dir, host.Human), req)
	if !bytes.Equal(first, second) {
		t.Fatalf("same database, same request, same id: packs differ:\n%s\n%s", first, second)
	}
}

func TestContextPolicyFallbacks(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		file   string
		policy string
		check  func(p pack.Pack) string
	}{
		{"a policy set that does not compile: embedded defaults decide", "broken.rego", "package palace.scope\n\ndecision := {",
			func(p pack.Pack) string {
				if !strings.Contains(p.Policy.Fallback, "failed to load") || p.Policy.Scope.Source != "embedded" {
					return "policy = " + p.Policy.Fallback
				}
				return ""
			}},
		{"a team scope policy with a malformed answer: the default decides, the pack says so", "scope.rego",
			"package palace.scope\n\nimport rego.v1\n\ndecision := {\"nobody\": true}\n",
			func(p pack.Pack) string {
				if p.Policy.Fallback != "" || !strings.Contains(p.Policy.Scope.Fallback, "scope.rego") || p.Policy.Scope.Hash == "" {
					return "scope decision = " + p.Policy.Scope.Fallback
				}
				return ""
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newCxEnv(t)
			dir := e.repo("a", "https://github.com/acme/a")
			e.card(e.open(dir, host.Human), scoped("checkpoint the WAL after imports", "shu"))
			pdir := filepath.Join(dir, ".palace", "policies")
			if err := os.MkdirAll(pdir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(pdir, tt.file), []byte(tt.policy), 0o644); err != nil {
				t.Fatal(err)
			}
			p, err := e.open(dir, host.Human).Pack().Context(ctx, cxScopedRequest())
			if err != nil {
				t.Fatal(err)
			}
			if msg := tt.check(p); msg != "" {
				t.Error(msg)
			}
			if len(p.Items) != 1 || p.Items[0].Lane != "core" {
				t.Errorf("the default did not decide: items %+v", p.Items)
			}
		})
	}
}
