package host_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/policies"
)

func TestWatchPoliciesSwapsTheHostSet(t *testing.T) {
	dir := t.TempDir()
	h, err := host.Open(context.Background(), host.Options{Home: filepath.Join(dir, "home"), Cwd: dir, Mode: host.Human, Actor: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ctx, cancel := context.WithCancel(context.Background())
	type change struct {
		set *policies.Set
		err error
	}
	changes := make(chan change, 8)
	w, err := h.WatchPolicies(ctx, func(s *policies.Set, err error) { changes <- change{s, err} })
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); <-w.Done() }()
	next := func() change {
		t.Helper()
		select {
		case c := <-changes:
			return c
		case <-time.After(10 * time.Second):
			t.Fatal("no reload")
		}
		return change{}
	}
	if first := next(); first.err != nil {
		t.Fatal(first.err)
	}
	source := func() string {
		t.Helper()
		set, err := h.Policies(ctx)
		if err != nil {
			t.Fatal(err)
		}
		sv, _ := set.Served(policies.Gate)
		return sv.Source
	}
	if got := source(); got != policies.SourceEmbedded {
		t.Fatalf("gate from %s before any home policy", got)
	}

	home := h.PolicySources().HomeDir
	write := func(src string) {
		t.Helper()
		if err := os.MkdirAll(home, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, "gate.rego"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("package palace.gate\n\ndecision := {\"allow\": false, \"reasons\": [\"home\"], \"missing\": {}}\n")
	if c := next(); c.err != nil {
		t.Fatal(c.err)
	}
	if got := source(); got != policies.SourceHome {
		t.Fatalf("gate from %s after a home policy appeared", got)
	}

	write("package palace.gate\n\ndecision := {\n")
	if c := next(); c.err == nil {
		t.Fatal("broken policy reported no error")
	}
	if got := source(); got != policies.SourceHome {
		t.Fatalf("a broken save replaced the serving set (gate from %s)", got)
	}
}
