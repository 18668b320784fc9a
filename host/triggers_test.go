package host_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/intake"
)

// openTriggerHost opens a palace outside git (global anchor only).
func openTriggerHost(t testing.TB) *host.Host {
	t.Helper()
	dir := t.TempDir()
	h, err := host.Open(context.Background(), host.Options{Home: filepath.Join(dir, "home"), Cwd: dir, Mode: host.Human, Actor: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func TestCompileTriggersReportsInvalid(t *testing.T) {
	// distill refuses a bad pattern, so the set can only meet one that an
	// older palace or another tool stored; the set's answer for a good one
	// must not depend on it.
	ctx := context.Background()
	h := openTriggerHost(t)
	ev, _ := h.Intake().Record(ctx, intake.RecordRequest{Anchor: "global", Content: "seen"})
	_, err := h.Distill(ctx, intake.DistillRequest{Anchor: "global", Statement: "bad", Tier: "qi", Supporting: []string{ev.ID},
		Trigger: domain.Trigger{Patterns: []string{"a("}}})
	if err == nil || !strings.Contains(err.Error(), `trigger pattern "a(" is not a valid regular expression`) {
		t.Fatalf("distill with a bad pattern: err = %v", err)
	}
}

func TestChangeProbeSeesOtherHosts(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	a, err := host.Open(ctx, host.Options{Home: home, Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := host.Open(ctx, host.Options{Home: home, Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	p, err := a.NewChangeProbe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	v1, err := p.Version(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v2, _ := p.Version(ctx); v2 != v1 {
		t.Fatalf("version moved without a commit: %d → %d", v1, v2)
	}
	if _, err := b.Intake().Record(ctx, intake.RecordRequest{Anchor: "global", Content: "from another host"}); err != nil {
		t.Fatal(err)
	}
	if v3, _ := p.Version(ctx); v3 == v1 {
		t.Fatalf("version did not move after another host committed: %d", v3)
	}
}
