package policies_test

import (
	"context"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palacehq/palace/policies"
)

// Two modules a cloned repository can carry in .palace/policies/gate.wasm.
// elementBomb declares ~1.7 G element segments in five bytes, which wazero
// v1.12.0 allocated before reading one; loopingStart's start function never
// returns. plugins/testdata/hostile holds them and many more.
var (
	elementBomb  = mustHex("0061736d010000000105016000017f03020100070801046761746500000905b6b6b6b6060a0601040041000b")
	loopingStart = mustHex("0061736d010000000108026000017f6000000303020001070801046761746500000801010a0e02040041000b070003400c000b0b")
)

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// TestWatchHostileWasmKeepsLastGoodSet: a hostile module dropped next to
// the files of the serving set is refused with its reason, and that set
// keeps serving; removing the module brings back what the files say.
func TestWatchHostileWasmKeepsLastGoodSet(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		wasm []byte
		want string
	}{
		{"element bomb", elementBomb, "element section"},
		{"looping start", loopingStart, "start function"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			repo := t.TempDir()
			writePolicy(t, repo, "lanes.rego", "package palace.lanes\n\nimport rego.v1\n\ndecision := data.palace.default.lanes.decision\n")
			w, r := watch(t, policies.Sources{RepoDir: repo})
			good, _ := w.Current()

			writePolicy(t, filepath.Join(repo, "team"), "gate.wasm", string(tt.wasm))
			bad := r.next(t)
			if bad.err == nil || bad.set != good {
				t.Fatalf("hostile module: set %p (good %p), err %v", bad.set, good, bad.err)
			}
			if !strings.Contains(bad.err.Error(), "gate.wasm") || !strings.Contains(bad.err.Error(), tt.want) {
				t.Fatalf("error %q does not name the module and %q", bad.err, tt.want)
			}
			if out, _ := good.Gate(context.Background(), gateInput("qi", "promoted", 0, 0, 0, 0, "agent")); out.Allow {
				t.Fatalf("the last good set (embedded gate) allowed an unsupported promotion")
			}

			must(t, os.Remove(filepath.Join(repo, "team", "gate.wasm")))
			back := r.next(t)
			if back.err != nil || back.set == good || back.set.Hash() != good.Hash() {
				t.Fatalf("removing the module did not reload the files (err %v)", back.err)
			}
		})
	}
}

// TestWatchDeletedPolicyDoesNotOutliveAFailure reproduces a fail-open: an
// allow-all gate.rego serves, a hostile gate.wasm arrives, gate.rego is
// deleted. The reload fails on the module, and the set that still held the
// deleted gate.rego must not keep answering: the watcher withdraws it, the
// gate then fails closed, and removing the module restores the embedded
// default.
func TestWatchDeletedPolicyDoesNotOutliveAFailure(t *testing.T) {
	t.Parallel()
	def, _ := policies.LoadDefaults(context.Background(), policies.Options{})
	repo := t.TempDir()
	writePolicy(t, repo, "gate.rego", teamGate(true))
	w, r := watch(t, policies.Sources{RepoDir: repo})
	allowAll, _ := w.Current()
	in := gateInput("qi", "promoted", 0, 0, 0, 0, "agent")
	if out, _ := allowAll.Gate(context.Background(), in); !out.Allow {
		t.Fatal("the team's allow-all gate is not serving")
	}

	writePolicy(t, repo, "gate.wasm", string(loopingStart))
	conflict := r.next(t)
	if conflict.err == nil || conflict.set != allowAll {
		t.Fatalf("gate.wasm next to gate.rego: set %p, err %v; want the last good set and an error", conflict.set, conflict.err)
	}

	must(t, os.Remove(filepath.Join(repo, "gate.rego")))
	withdrawn := r.next(t)
	if withdrawn.set != nil || withdrawn.err == nil || !strings.Contains(withdrawn.err.Error(), "start function") {
		t.Fatalf("after gate.rego was deleted: set %p, err %v; want no set and the module's error", withdrawn.set, withdrawn.err)
	}
	if cur, err := w.Current(); cur != nil || err == nil {
		t.Fatalf("Current = %p, %v; want no set and the error", cur, err)
	}

	must(t, os.Remove(filepath.Join(repo, "gate.wasm")))
	back := r.next(t)
	if back.err != nil || back.set == nil || back.set.Hash() != def.Hash() {
		t.Fatalf("removing gate.wasm did not restore the defaults (err %v)", back.err)
	}
	if out, _ := back.set.Gate(context.Background(), in); out.Allow {
		t.Fatal("the embedded gate allowed an unsupported promotion")
	}
}
