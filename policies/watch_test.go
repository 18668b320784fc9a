package policies_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/palacehq/palace/policies"
)

// reloads collects a watcher's notifications.
type reloads struct {
	ch chan reload
}

type reload struct {
	set *policies.Set
	err error
}

func watch(t *testing.T, src policies.Sources) (*policies.Watcher, *reloads) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &reloads{ch: make(chan reload, 16)}
	w, err := policies.Watch(ctx, src, policies.WatchOptions{Debounce: 200 * time.Millisecond}, func(s *policies.Set, err error) {
		r.ch <- reload{s, err}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		select {
		case <-w.Done():
		case <-time.After(10 * time.Second):
			t.Error("watcher goroutine did not end with its context")
		}
	})
	first := r.next(t)
	if first.set == nil && first.err == nil {
		t.Fatal("first load reported nothing")
	}
	return w, r
}

// next waits for one notification.
func (r *reloads) next(t *testing.T) reload {
	t.Helper()
	select {
	case x := <-r.ch:
		return x
	case <-time.After(10 * time.Second):
		t.Fatal("no reload")
	}
	return reload{}
}

// quiet asserts that no further notification arrives while the watcher has
// five debounce periods to produce one. The debounce is generous (200ms)
// so that a loaded machine's scheduling gaps between the steps of one save
// stay inside it.
func (r *reloads) quiet(t *testing.T) {
	t.Helper()
	select {
	case x := <-r.ch:
		t.Fatalf("reloaded twice for one save: %v", x.err)
	case <-time.After(time.Second):
	}
}

func gateHash(s *policies.Set) string {
	sv, _ := s.Served(policies.Gate)
	return sv.Hash
}

func teamGate(allow bool) string {
	a := "false"
	if allow {
		a = "true"
	}
	return "package palace.gate\n\nimport rego.v1\n\ndecision := {\"allow\": " + a + ", \"reasons\": [\"team\"], \"missing\": {}}\n"
}

func TestWatchEditorSaves(t *testing.T) {
	t.Parallel()
	def, _ := policies.LoadDefaults(context.Background(), policies.Options{})
	saves := []struct {
		name string
		save func(t *testing.T, path, content string)
	}{
		{"temp file and rename", func(t *testing.T, path, content string) {
			tmp := path + ".tmp~"
			must(t, os.WriteFile(tmp, []byte(content), 0o644))
			must(t, os.Rename(tmp, path))
		}},
		{"truncate and write", func(t *testing.T, path, content string) {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0o644)
			must(t, err)
			must(t, f.Sync())
			_, err = f.WriteString(content[:10])
			must(t, err)
			_, err = f.WriteString(content[10:])
			must(t, err)
			must(t, f.Close())
		}},
		{"delete and create", func(t *testing.T, path, content string) {
			must(t, os.Remove(path))
			must(t, os.WriteFile(path, []byte(content), 0o644))
		}},
		{"vim backup dance", func(t *testing.T, path, content string) {
			dir := filepath.Dir(path)
			must(t, os.WriteFile(filepath.Join(dir, ".gate.rego.swp"), []byte("swap"), 0o644))
			must(t, os.WriteFile(filepath.Join(dir, "4913"), nil, 0o644))
			must(t, os.Remove(filepath.Join(dir, "4913")))
			must(t, os.Rename(path, path+"~"))
			must(t, os.WriteFile(path, []byte(content), 0o644))
			must(t, os.Remove(path+"~"))
		}},
	}
	for _, tt := range saves {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			repo := t.TempDir()
			path := filepath.Join(repo, "gate.rego")
			writePolicy(t, repo, "gate.rego", teamGate(false))
			w, r := watch(t, policies.Sources{RepoDir: repo})
			before, _ := w.Current()
			tt.save(t, path, teamGate(true))
			got := r.next(t)
			if got.err != nil {
				t.Fatalf("reload failed: %v", got.err)
			}
			r.quiet(t)
			cur, err := w.Current()
			if err != nil || cur != got.set || gateHash(cur) == gateHash(before) || gateHash(cur) == gateHash(def) {
				t.Fatalf("current set is not the saved one (err %v)", err)
			}
			if out, _ := cur.Gate(context.Background(), gateInput("qi", "promoted", 0, 0, 0, 0, "agent")); !out.Allow {
				t.Fatalf("saved policy not serving: %v", out.Reasons)
			}
		})
	}
}

func TestWatchSyntaxErrorKeepsLastGoodSet(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	writePolicy(t, repo, "gate.rego", teamGate(true))
	w, r := watch(t, policies.Sources{RepoDir: repo})
	good, _ := w.Current()

	writePolicy(t, repo, "gate.rego", "package palace.gate\n\nimport rego.v1\n\ndecision := {\"allow\": true\n")
	bad := r.next(t)
	r.quiet(t)
	if bad.err == nil || bad.set != good {
		t.Fatalf("broken save: set %p (good %p), err %v", bad.set, good, bad.err)
	}
	want := filepath.Join(repo, "gate.rego") + ":6:1: rego_parse_error: "
	if !strings.HasPrefix(bad.err.Error(), want) {
		t.Errorf("error %q, want it to start %q", bad.err, want)
	}
	var es policies.Errors
	if !asErrors(bad.err, &es) || es[0].Line != 6 || es[0].Path != filepath.Join(repo, "gate.rego") {
		t.Errorf("errors not located: %#v", bad.err)
	}
	if cur, err := w.Current(); cur != good || err == nil {
		t.Errorf("Current = %p, %v; want the last good set and the error", cur, err)
	}

	writePolicy(t, repo, "gate.rego", teamGate(false))
	fixed := r.next(t)
	r.quiet(t)
	if fixed.err != nil || fixed.set == good {
		t.Fatalf("fix did not swap in: %v", fixed.err)
	}
	if cur, err := w.Current(); cur != fixed.set || err != nil {
		t.Errorf("Current after fix = %p, %v", cur, err)
	}
}

func TestWatchSourceFolderAppearsAndGoes(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	repo := filepath.Join(work, ".palace", "policies")
	w, r := watch(t, policies.Sources{RepoDir: repo})
	def, _ := w.Current()
	if sv, _ := def.Served(policies.Gate); sv.Source != policies.SourceEmbedded {
		t.Fatalf("gate served by %s before the folder exists", sv.Source)
	}

	writePolicy(t, repo, "gate.rego", teamGate(false)) // mkdir -p .palace/policies + write
	got := r.next(t)
	r.quiet(t)
	if got.err != nil {
		t.Fatal(got.err)
	}
	if sv, _ := got.set.Served(policies.Gate); sv.Source != policies.SourceRepo {
		t.Fatalf("gate served by %s after the team policy appeared", sv.Source)
	}

	must(t, os.Remove(filepath.Join(repo, "gate.rego")))
	back := r.next(t)
	r.quiet(t)
	if back.err != nil || back.set.Hash() != def.Hash() {
		t.Fatalf("removing the team policy did not restore the defaults (err %v)", back.err)
	}

	// A subfolder created later is watched too.
	writePolicy(t, filepath.Join(repo, "lib"), "gate.rego", teamGate(true))
	sub := r.next(t)
	if sub.err != nil {
		t.Fatal(sub.err)
	}
	writePolicy(t, filepath.Join(repo, "lib"), "gate.rego", teamGate(false))
	if again := r.next(t); again.err != nil || again.set == sub.set {
		t.Fatalf("edit in a new subfolder not reloaded (err %v)", again.err)
	}
	r.quiet(t)

	must(t, os.RemoveAll(filepath.Join(work, ".palace")))
	gone := r.next(t)
	if gone.err != nil || gone.set.Hash() != def.Hash() {
		t.Fatalf("removing .palace did not restore the defaults (err %v)", gone.err)
	}
}

func TestWatchIgnoresNonPolicyFiles(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	writePolicy(t, repo, "gate.rego", teamGate(true))
	_, r := watch(t, policies.Sources{RepoDir: repo})
	writePolicy(t, repo, "notes.md", "x")
	writePolicy(t, repo, "gate.rego", teamGate(true)) // same bytes
	must(t, os.Chmod(filepath.Join(repo, "gate.rego"), 0o600))
	r.quiet(t)
}

func TestWatchFirstLoadFails(t *testing.T) {
	repo := t.TempDir()
	writePolicy(t, repo, "scope.rego", "package palace.scope\n\ndecision := \n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := policies.Watch(ctx, policies.Sources{RepoDir: repo}, policies.WatchOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if set, err := w.Current(); set != nil || err == nil {
		t.Fatalf("Current = %v, %v; want no set and the error", set, err)
	}
	cancel()
	<-w.Done()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
