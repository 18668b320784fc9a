package host_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/policies"
)

// TestWatchPoliciesSwapsTheHostSet edits real policy files under a watched
// home: a good edit is swapped in, a broken one leaves the last good set
// serving and is reported with its file, a broken set that lost a file of
// the last good one leaves no set, and Stop ends the watch.
func TestWatchPoliciesSwapsTheHostSet(t *testing.T) {
	dir := t.TempDir()
	h, err := host.Open(context.Background(), host.Options{Home: filepath.Join(dir, "home"), Cwd: dir, Mode: host.Human, Actor: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ctx := context.Background()
	reloads := make(chan host.PolicyReload, 8)
	w, err := h.WatchPolicies(ctx, func(r host.PolicyReload) { reloads <- r })
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			w.Stop()
		}
	}()
	next := func() host.PolicyReload {
		t.Helper()
		select {
		case r := <-reloads:
			return r
		case <-time.After(10 * time.Second):
			t.Fatal("no reload")
		}
		return host.PolicyReload{}
	}
	if first := next(); first.Err != nil || first.Set == nil || !strings.HasPrefix(first.Message(), "policies loaded") {
		t.Fatalf("first load: %+v (%s)", first, first.Message())
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
	write := func(name, src string) {
		t.Helper()
		if err := os.MkdirAll(home, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("gate.rego", "package palace.gate\n\ndecision := {\"allow\": false, \"reasons\": [\"home\"], \"missing\": {}}\n")
	if r := next(); r.Err != nil || r.KeptLastGood() {
		t.Fatalf("good edit: %+v", r)
	}
	if got := source(); got != policies.SourceHome {
		t.Fatalf("gate from %s after a home policy appeared", got)
	}

	write("scope.rego", "package palace.scope\n\ndecision := {\n")
	r := next()
	if r.Err == nil || !r.KeptLastGood() {
		t.Fatalf("broken policy: %+v, want an error and the last good set", r)
	}
	var located policies.Errors
	if !errors.As(r.Err, &located) || len(located) == 0 || !strings.HasSuffix(located[0].Path, "scope.rego") {
		t.Fatalf("broken policy's error %v does not locate scope.rego", r.Err)
	}
	if !strings.Contains(r.Message(), "last good set keeps serving") {
		t.Fatalf("message %q", r.Message())
	}
	if got := source(); got != policies.SourceHome {
		t.Fatalf("a broken save replaced the serving set (gate from %s)", got)
	}

	// The last good set was built from gate.rego; with it gone and the
	// set still broken, nothing good is left.
	if err := os.Remove(filepath.Join(home, "gate.rego")); err != nil {
		t.Fatal(err)
	}
	if r := next(); r.Err == nil || r.Set != nil || !strings.Contains(r.Message(), "no good set is left") {
		t.Fatalf("a file of the last good set deleted: %+v (%s)", r, r.Message())
	}
	if _, err := h.Policies(ctx); err == nil {
		t.Fatal("Policies serves a set after its file was deleted and the rest is broken")
	}

	write("scope.rego", "package palace.scope\n\nimport rego.v1\n\ndecision := {\"cards\": {}}\n")
	if r := next(); r.Err != nil || r.Set == nil {
		t.Fatalf("fixed policy: %+v", r)
	}
	w.Stop()
	stopped = true
	select {
	case <-w.Done():
	default:
		t.Fatal("Stop returned before the watch ended")
	}
}
