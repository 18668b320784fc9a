package policies_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/plugins"
	"github.com/palacehq/palace/plugins/plugintest"
	"github.com/palacehq/palace/policies"
)

// Targets: a warm lanes-go call on a 200-card batch ≤ 2 ms; a
// cold load with a warm disk cache ≤ 30 ms; the warm gate-go call reported
// beside the prepared Rego gate and the Go engine.

// BenchmarkGateEngines is one gate decision through Set.Gate by each engine:
// the Go engine of the unmodified default, the same default in OPA
// (RegoOnly), and examples/plugins/gate-go as a repo gate.wasm.
func BenchmarkGateEngines(b *testing.B) {
	in := promoteQi
	in.Counts = domain.RoleCounts{Supporting: 1, Verification: 1}
	for _, e := range engineCases(b, "gate.wasm", "gate") {
		b.Run(e.name, func(b *testing.B) {
			set := e.load(b)
			ctx := context.Background()
			if out, d := set.Gate(ctx, in); !out.Allow || d.Engine != e.name {
				b.Fatalf("%+v %+v", out, d)
			}
			b.ReportAllocs()
			for b.Loop() {
				set.Gate(ctx, in)
			}
		})
	}
}

// BenchmarkLanes200Engines is a 200-card lanes batch through Set.Lanes by
// each engine, lanes-go as a repo lanes.wasm.
func BenchmarkLanes200Engines(b *testing.B) {
	in := lanesBatch(rand.New(rand.NewPCG(1, 2)), 200)
	for _, e := range engineCases(b, "lanes.wasm", "lanes") {
		b.Run(e.name, func(b *testing.B) {
			set := e.load(b)
			ctx := context.Background()
			if _, d := set.Lanes(ctx, in); d.Engine != e.name || d.Fallback != "" {
				b.Fatalf("%+v", d)
			}
			b.ReportAllocs()
			for b.Loop() {
				set.Lanes(ctx, in)
			}
		})
	}
}

// BenchmarkLanesGoCall200 is the lanes target itself: one warm
// call of examples/plugins/lanes-go on a 200-card batch encoded exactly as
// palace sends it (card ids of store.NewID's length, every field set), the
// module's JSON answer returned unparsed. BenchmarkLanes200Engines/wasm adds
// palace's side: encoding the input and checking the answer.
func BenchmarkLanesGoCall200(b *testing.B) {
	ctx := context.Background()
	rt, err := plugins.NewRuntime(ctx, plugins.Config{}.WithCacheDir(plugintest.CacheDir()).WithVersion("bench"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { rt.Close(ctx) })
	m, err := rt.Load(ctx, "lanes.wasm", plugintest.Guest(b, "lanes"))
	if err != nil {
		b.Fatal(err)
	}
	in := lanesBatch(rand.New(rand.NewPCG(3, 4)), 200)
	for i := range in.Cards {
		c := &in.Cards[i].Card
		c.ID = fmt.Sprintf("kc_01JQ8Z3W5V%016d", i) // 29 bytes, as store.NewID
		c.Anchor, c.Field = "repo", "testing"
	}
	input, err := policies.WasmInput(policies.Lanes, in)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := m.Call(ctx, "lanes", input); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(input)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Call(ctx, "lanes", input); err != nil {
			b.Fatal(err)
		}
	}
}

// engineCase is one engine serving a point in a benchmark.
type engineCase struct {
	name string
	src  policies.Sources
	opts policies.Options
}

// engineCases are the three engines of a point: the Go engine of the
// unmodified default, the same default in OPA (RegoOnly), and an example
// guest dropped into a repo policy folder as file.
func engineCases(b *testing.B, file, guest string) []engineCase {
	opts := wasmOpts()
	rego := opts
	rego.RegoOnly = true
	return []engineCase{
		{"go", policies.Sources{}, opts},
		{"rego", policies.Sources{}, rego},
		{"wasm", policies.Sources{RepoDir: benchDir(b, file, guest)}, opts},
	}
}

// load loads the case's set, closed when the benchmark ends.
func (e engineCase) load(b *testing.B) *policies.Set {
	set, err := policies.Load(context.Background(), e.src, e.opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { set.Close() })
	return set
}

func benchDir(b *testing.B, file, guest string) string {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, file), plugintest.Guest(b, guest), 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkColdProcessGate is a CLI's cold start with a team gate.wasm: a
// new process loads the policy set and decides one gate. "cold-cache"
// starts every process with an empty disk cache (it compiles the Go
// guest); "warm-cache" with the cache the previous process left;
// "no-wasm" is the same process with the embedded defaults only, the cost
// every start pays. The process is this test binary, running
// TestColdProcessHelper.
func BenchmarkColdProcessGate(b *testing.B) {
	repo := benchDir(b, "gate.wasm", "gate")
	for _, run := range []string{"no-wasm", "cold-cache", "warm-cache"} {
		b.Run(run, func(b *testing.B) {
			cache := filepath.Join(b.TempDir(), "wazero")
			dir := repo
			switch run {
			case "no-wasm":
				dir = b.TempDir()
			case "warm-cache":
				runHelper(b, dir, cache) // fills the cache
			}
			for b.Loop() {
				if run == "cold-cache" {
					b.StopTimer()
					os.RemoveAll(cache)
					b.StartTimer()
				}
				runHelper(b, dir, cache)
			}
		})
	}
}

func runHelper(b *testing.B, repo, cache string) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestColdProcessHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), "PALACE_HELPER_REPO="+repo, "PALACE_HELPER_CACHE="+cache)
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("helper process: %v\n%s", err, out)
	}
}

// TestColdProcessHelper is the process BenchmarkColdProcessGate starts; it
// does nothing in a normal test run.
func TestColdProcessHelper(t *testing.T) {
	repo, cache := os.Getenv("PALACE_HELPER_REPO"), os.Getenv("PALACE_HELPER_CACHE")
	if repo == "" {
		t.Skip("run by BenchmarkColdProcessGate")
	}
	set, err := policies.Load(context.Background(), policies.Sources{RepoDir: repo}, policies.Options{CacheDir: cache, Version: "bench"})
	if err != nil {
		t.Fatal(err)
	}
	out, d := set.Gate(context.Background(), promoteQi)
	if d.Error != "" {
		t.Fatalf("%+v", d)
	}
	b, _ := json.Marshal(out)
	fmt.Println(string(b))
}
