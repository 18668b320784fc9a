package policies_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/plugins/plugintest"
	"github.com/palacehq/palace/policies"
)

// wasmOpts are the options of the tests' sets: the test disk cache, and a
// deadline long enough that a busy machine never turns a slow call into a
// failure. Deadline tests set their own.
func wasmOpts() policies.Options {
	return policies.Options{CacheDir: plugintest.CacheDir(), Version: "test", Timeout: 10 * time.Second}
}

// policyDir writes files (name → content) into a new folder.
func policyDir(t *testing.T, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for name, b := range files {
		p := filepath.Join(dir, name)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, b, 0o644))
	}
	return dir
}

func load(t *testing.T, src policies.Sources, opts policies.Options) *policies.Set {
	t.Helper()
	set, err := policies.Load(context.Background(), src, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { set.Close() })
	return set
}

var promoteQi = policies.GateInput{
	Action: "promote", Target: "promoted",
	Card:     policies.GateCard{ID: "kc_1", Tier: "qi", Statement: "Wrap writes in store.Tx"},
	Counts:   domain.RoleCounts{Supporting: 1},
	Reviewer: policies.Reviewer{Name: "claude", Type: "agent"},
	Mode:     "agent",
}

func TestWasmGateServesItsPoint(t *testing.T) {
	t.Parallel()
	repo := policyDir(t, map[string][]byte{"gate.wasm": plugintest.Guest(t, "gate")})
	set := load(t, policies.Sources{RepoDir: repo}, wasmOpts())
	def := load(t, policies.Sources{}, wasmOpts())

	sv, ok := set.Served(policies.Gate)
	path := filepath.Join(repo, "gate.wasm")
	if !ok || sv.Engine != policies.EngineWasm || sv.Source != policies.SourceRepo || !reflect.DeepEqual(sv.Files, []string{path}) {
		t.Fatalf("gate served by %+v", sv)
	}
	if lanes, _ := set.Served(policies.Lanes); lanes.Engine != policies.EngineGo {
		t.Errorf("lanes: got engine %s, want the embedded default's go", lanes.Engine)
	}
	if set.Hash() == def.Hash() {
		t.Error("the set's hash does not cover the module")
	}
	var wasmFiles []policies.File
	for _, f := range set.Files() {
		if f.Kind == policies.KindWasm {
			wasmFiles = append(wasmFiles, f)
		}
		if f.Package == "palace.gate" {
			t.Errorf("the embedded gate.rego is still in the set: %s", f.Path)
		}
	}
	if len(wasmFiles) != 1 || !reflect.DeepEqual(wasmFiles[0].Points, []policies.Point{policies.Gate}) || wasmFiles[0].Source != policies.SourceRepo {
		t.Fatalf("wasm files: %+v", wasmFiles)
	}

	got, d := set.Gate(context.Background(), promoteQi)
	want, _ := def.Gate(context.Background(), promoteQi)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("gate-go: got %+v, want %+v", got, want)
	}
	if d.Engine != policies.EngineWasm || d.Hash != sv.Hash || d.Error != "" {
		t.Errorf("decision: %+v", d)
	}
}

func TestWasmPrecedence(t *testing.T) {
	t.Parallel()
	gateWasm := plugintest.Guest(t, "gate")
	team := []byte(teamGate(false))
	tests := []struct {
		name       string
		home, repo map[string][]byte
		source     string
		engine     string
	}{
		{"repo wasm replaces home rego", map[string][]byte{"gate.rego": team}, map[string][]byte{"gate.wasm": gateWasm}, policies.SourceRepo, policies.EngineWasm},
		{"repo rego replaces home wasm", map[string][]byte{"gate.wasm": gateWasm}, map[string][]byte{"gate.rego": team}, policies.SourceRepo, policies.EngineRego},
		{"home wasm replaces embedded", map[string][]byte{"sub/gate.wasm": gateWasm}, nil, policies.SourceHome, policies.EngineWasm},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := policies.Sources{HomeDir: policyDir(t, tt.home), RepoDir: policyDir(t, tt.repo)}
			set := load(t, src, wasmOpts())
			sv, _ := set.Served(policies.Gate)
			if sv.Source != tt.source || sv.Engine != tt.engine {
				t.Fatalf("gate served by %s/%s, want %s/%s", sv.Source, sv.Engine, tt.source, tt.engine)
			}
			for _, f := range set.Files() {
				if f.Source != tt.source && (f.Package == "palace.gate" || f.Kind == policies.KindWasm) {
					t.Errorf("replaced file still in the set: %+v", f)
				}
			}
		})
	}
}

func TestWasmConflictInOneSource(t *testing.T) {
	t.Parallel()
	repo := policyDir(t, map[string][]byte{
		"gate.wasm": plugintest.Guest(t, "gate"),
		"gate.rego": []byte("# the team's gate\n" + teamGate(true)),
	})
	_, err := policies.Load(context.Background(), policies.Sources{RepoDir: repo}, wasmOpts())
	want := filepath.Join(repo, "gate.rego") + ":2:1: policy_conflict: palace.gate is served twice in the repo source: by this package and by " +
		filepath.Join(repo, "gate.wasm") + "; remove one of them"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}

	two := policyDir(t, map[string][]byte{"a.wasm": plugintest.Guest(t, "gate"), "b.wasm": plugintest.Guest(t, "policy")})
	_, err = policies.Load(context.Background(), policies.Sources{HomeDir: two}, wasmOpts())
	mustContain(t, err, filepath.Join(two, "b.wasm")+": policy_conflict: palace.gate is served twice in the home source: by this module and by "+filepath.Join(two, "a.wasm"))
}

func TestWasmRefusedModule(t *testing.T) {
	t.Parallel()
	repo := policyDir(t, map[string][]byte{"evil.wasm": plugintest.Guest(t, "evil")})
	_, err := policies.Load(context.Background(), policies.Sources{RepoDir: repo}, wasmOpts())
	var es policies.Errors
	if !errors.As(err, &es) || len(es) != 1 || es[0].Code != "plugin_refused" || es[0].Path != filepath.Join(repo, "evil.wasm") {
		t.Fatalf("got %v", err)
	}
	mustContain(t, err, "imports env.")

	junk := policyDir(t, map[string][]byte{"gate.wasm": []byte("not wasm at all")})
	_, err = policies.Load(context.Background(), policies.Sources{RepoDir: junk}, wasmOpts())
	mustContain(t, err, "gate.wasm: plugin_refused: not a valid WebAssembly module")
}

// A module that loops, panics or answers with the wrong shape fails the
// decision as Rego would: gate denies naming the module, scope and lanes
// fall back to the embedded default and say so, mailbox fails. Each time
// the set keeps serving: the next decision gets a fresh instance.
func TestWasmFailureSemantics(t *testing.T) {
	t.Parallel()
	repo := policyDir(t, map[string][]byte{"policy.wasm": plugintest.Guest(t, "policy")})
	opts := wasmOpts()
	opts.Timeout = policies.DefaultTimeout
	set := load(t, policies.Sources{RepoDir: repo}, opts)
	def := load(t, policies.Sources{}, wasmOpts())
	ctx := context.Background()
	who := "policy palace.%s (" + filepath.Join(repo, "policy.wasm") + ") failed"

	for _, how := range []string{"loop", "panic", "malformed", "notjson"} {
		t.Run(how, func(t *testing.T) {
			in := promoteQi
			in.Card.Statement = how
			out, d := set.Gate(ctx, in)
			if out.Allow || len(out.Reasons) != 1 || !strings.HasPrefix(out.Reasons[0], strings.Replace(who, "%s", "gate", 1)+", denying: ") || d.Error == "" || d.Engine != policies.EngineWasm {
				t.Errorf("gate: %+v %+v", out, d)
			}

			scopeIn := policies.ScopeInput{Cards: []policies.ScopeCard{{ID: how}, {ID: "kc_2", Scope: policies.CardScope{Paths: []string{"web/**"}}}}}
			so, sd := set.Scope(ctx, scopeIn)
			want, _ := def.Scope(ctx, scopeIn)
			if !reflect.DeepEqual(so, want) || !strings.HasPrefix(sd.Fallback, strings.Replace(who, "%s", "scope", 1)+", the embedded default decided: ") || sd.Engine != policies.EngineGo {
				t.Errorf("scope: %+v %+v", so, sd)
			}

			lanesIn := policies.LanesInput{Cards: []policies.LanesCard{{Card: policies.LanesCardInfo{ID: how}, ScopeFit: 30}}}
			lo, ld := set.Lanes(ctx, lanesIn)
			wantL, _ := def.Lanes(ctx, lanesIn)
			if !reflect.DeepEqual(lo, wantL) || !strings.HasPrefix(ld.Fallback, strings.Replace(who, "%s", "lanes", 1)) {
				t.Errorf("lanes: %+v %+v", lo, ld)
			}

			deny, md, err := set.Mailbox(ctx, policies.MailboxInput{Box: "project", Line: 1, Letter: map[string]any{"what": how}})
			if err == nil || deny != nil || !strings.HasPrefix(err.Error(), strings.Replace(who, "%s", "mailbox", 1)+": ") || md.Error == "" {
				t.Errorf("mailbox: %v %v %+v", deny, err, md)
			}
		})
	}
	if how := "loop"; true {
		in := promoteQi
		in.Card.Statement = how
		out, _ := set.Gate(ctx, in)
		mustContain(t, errors.New(out.Reasons[0]), "deadline of 100ms exceeded")
	}

	// Still serving, with the module's own answers. The first call after a
	// failure starts a fresh instance, and the guest's Go runtime, under the
	// 100 ms deadline, which a machine busy with other tests (-race, a
	// compile on every core) can exceed: a few tries, since a deadline is
	// not what this checks.
	serving := func(what string, decide func() (ok bool, got string)) {
		t.Helper()
		var got string
		for range 5 {
			var ok bool
			if ok, got = decide(); ok {
				return
			}
		}
		t.Errorf("%s after failures: %s", what, got)
	}
	serving("gate", func() (bool, string) {
		out, d := set.Gate(ctx, promoteQi)
		return out.Allow && reflect.DeepEqual(out.Reasons, []string{"wasm says yes"}) && d.Error == "", fmt.Sprintf("%+v %+v", out, d)
	})
	serving("mailbox", func() (bool, string) {
		deny, _, err := set.Mailbox(ctx, policies.MailboxInput{Letter: map[string]any{"class": "bug"}})
		return err == nil && reflect.DeepEqual(deny, []string{"wasm: class bug"}), fmt.Sprintf("%v %v", deny, err)
	})
	serving("lanes", func() (bool, string) {
		lo, ld := set.Lanes(ctx, policies.LanesInput{Cards: []policies.LanesCard{{Card: policies.LanesCardInfo{ID: "kc_1"}}}})
		return lo["kc_1"].Lane == "scoped" && ld.Fallback == "" && ld.Engine == policies.EngineWasm, fmt.Sprintf("%+v %+v", lo, ld)
	})
}

// Close waits for the decisions in progress and never cuts one short;
// decisions asked of a closed set fail as a failing policy does.
func TestWasmSetClose(t *testing.T) {
	t.Parallel()
	repo := policyDir(t, map[string][]byte{"policy.wasm": plugintest.Guest(t, "policy")})
	opts := wasmOpts()
	opts.Timeout = time.Second
	set := load(t, policies.Sources{RepoDir: repo}, opts)
	ctx := context.Background()

	looping := promoteQi
	looping.Card.Statement = "loop"
	done := make(chan policies.GateOutput)
	go func() {
		out, _ := set.Gate(ctx, looping)
		done <- out
	}()
	for policies.CallsInFlight(set) == 0 {
		time.Sleep(time.Millisecond)
	}
	set.Close()
	if n := policies.CallsInFlight(set); n != 0 {
		t.Fatalf("Close returned with %d decisions running", n)
	}
	// Had Close released the module under the running call, the call would
	// have failed on a closed module; it ran to its deadline instead.
	out := <-done
	mustContain(t, errors.New(out.Reasons[0]), "deadline of 1s exceeded")

	out, d := set.Gate(ctx, promoteQi)
	if out.Allow || !strings.Contains(d.Error, policies.ErrSetClosed.Error()) {
		t.Errorf("gate on a closed set: %+v %+v", out, d)
	}
	if _, d := set.Scope(ctx, policies.ScopeInput{}); d.Fallback == "" {
		t.Errorf("scope on a closed set did not fall back: %+v", d)
	}
	set.Close() // a second Close is harmless
}

// A reload that leaves a module's bytes alone keeps its running module.
func TestWasmModuleSharedAcrossSets(t *testing.T) {
	t.Parallel()
	repo := policyDir(t, map[string][]byte{"gate.wasm": plugintest.Guest(t, "gate")})
	a := load(t, policies.Sources{RepoDir: repo}, wasmOpts())
	must(t, os.WriteFile(filepath.Join(repo, "extra.rego"), []byte("package team.extra\n\nx := 1\n"), 0o644))
	b := load(t, policies.Sources{RepoDir: repo}, wasmOpts())
	if policies.ModuleOf(a, policies.Gate) != policies.ModuleOf(b, policies.Gate) {
		t.Error("the unchanged module was loaded again")
	}
	a.Close()
	if out, d := b.Gate(context.Background(), promoteQi); d.Error != "" || out.Allow {
		t.Errorf("closing one set broke the other: %+v %+v", out, d)
	}
}

func mustContain(t *testing.T, err error, part string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), part) {
		t.Fatalf("error %v does not contain %q", err, part)
	}
}

// A .wasm dropped into a watched folder serves its point without a
// restart; deleting it brings back the source it had replaced, and the
// replaced set's module is closed after the grace period.
func TestWatchWasmDropAndDelete(t *testing.T) {
	t.Parallel()
	home := policyDir(t, map[string][]byte{"gate.rego": []byte(teamGate(false))})
	repo := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan reload, 16)
	w, err := policies.Watch(ctx, policies.Sources{HomeDir: home, RepoDir: repo},
		policies.WatchOptions{Options: wasmOpts(), Debounce: 200 * time.Millisecond, Grace: time.Millisecond},
		func(s *policies.Set, err error) { ch <- reload{s, err} })
	must(t, err)
	t.Cleanup(func() { cancel(); <-w.Done() })
	r := &reloads{ch: ch}
	if first := r.next(t); first.err != nil {
		t.Fatal(first.err)
	}
	servedBy := func(want string) *policies.Set {
		t.Helper()
		for {
			x := r.next(t)
			if sv, _ := x.set.Served(policies.Gate); x.err == nil && sv.Engine == want {
				return x.set
			}
		}
	}

	// Written in place, as a build writing straight into the folder
	// would: the watcher must wait for the whole module.
	wasmPath := filepath.Join(repo, "gate.wasm")
	must(t, os.WriteFile(wasmPath, plugintest.Guest(t, "gate"), 0o644))
	withWasm := servedBy(policies.EngineWasm)
	if out, _ := withWasm.Gate(context.Background(), promoteQi); out.Allow || !reflect.DeepEqual(out.Missing, map[string]int{"verification": 1}) {
		t.Fatalf("gate-go after the drop: %+v", out)
	}

	must(t, os.Remove(wasmPath))
	back := servedBy(policies.EngineRego)
	if sv, _ := back.Served(policies.Gate); sv.Source != policies.SourceHome {
		t.Fatalf("after the delete gate is served by %+v", sv)
	}
	// The replaced set is closed once its grace ends.
	for give := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		_, d := withWasm.Gate(context.Background(), promoteQi)
		if strings.Contains(d.Error, policies.ErrSetClosed.Error()) {
			break
		}
		if time.Now().After(give) {
			t.Fatal("the replaced set's module was never closed")
		}
	}
}

// A team gate.wasm retires the embedded gate's Rego tests, as a team
// gate.rego does: they test a policy that no longer serves.
func TestWasmRetiresReplacedDefaultTests(t *testing.T) {
	t.Parallel()
	repo := policyDir(t, map[string][]byte{"gate.wasm": plugintest.Guest(t, "gate")})
	rep, err := policies.RunTests(context.Background(), policies.Sources{RepoDir: repo}, policies.TestOptions{})
	must(t, err)
	lanes := 0
	for _, r := range rep.Results {
		if r.Package == "palace.gate_test" {
			t.Fatalf("the embedded gate's test %s ran against gate.wasm", r.Name)
		}
		if r.Package == "palace.lanes_test" {
			lanes++
		}
	}
	if lanes == 0 || !rep.OK() {
		t.Fatalf("the other defaults' tests must still run and pass: %d lanes tests, %+v", lanes, rep)
	}
}
