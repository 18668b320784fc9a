package host_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/term"

	"github.com/palacehq/palace/benchgen"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/audit"
	"github.com/palacehq/palace/host/pack"
	"github.com/palacehq/palace/store"
)

// benchEpoch is the clock of generated palaces and of the hosts that query
// them, so cached palaces keep their 30-day telemetry window.
var benchEpoch = benchgen.Epoch

// benchRequests are the rotating requests of the context and brief
// benchmarks: with and without a query, file, field, intents and tools.
var benchRequests = []pack.ContextRequest{
	{Query: "sqlite lock timeout", File: "store/db.go", Field: "storage", Intents: []string{"debug"}},
	{File: "api/handler.go", Intents: []string{"review"}},
	{Query: "retry deadline context cancel", Field: "api"},
	{Query: "flaky ci pipeline runner", Intents: []string{"test", "investigate"}, Tools: []string{"go"}},
	{},
	{File: "host/context.go", Language: "go", Intents: []string{"refactor", "perf"}, Instructions: []string{"answer briefly"}},
}

// moduleRoot is the directory holding go.mod above the test's directory.
func moduleRoot(b *testing.B) string {
	dir, err := os.Getwd()
	if err != nil {
		b.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			b.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
}

// benchPalace returns the home and checkout of a generated palace of spec,
// cached under <module>/.bench/palace-<spec key>/.
func benchPalace(b *testing.B, spec benchgen.Spec) (home, repo string) {
	b.Helper()
	var progress func(benchgen.Progress)
	if term.IsTerminal(int(os.Stderr.Fd())) {
		progress = func(p benchgen.Progress) {
			fmt.Fprintf(os.Stderr, "\rgenerating %s palace: %-16s %3d%%", spec.Key(), p.Stage, p.Done*100/max(1, p.Total))
			if p.Done == p.Total {
				fmt.Fprintln(os.Stderr)
			}
		}
	}
	home, repo, err := benchgen.Palace(context.Background(), filepath.Join(moduleRoot(b), ".bench", "palace-"+spec.Key()), spec, progress, nil)
	if err != nil {
		b.Fatal(err)
	}
	return home, repo
}

// writableCopy copies a cached home so a benchmark that writes leaves the
// cache as it was.
func writableCopy(b *testing.B, home string) string {
	b.Helper()
	dst := filepath.Join(b.TempDir(), "home")
	if err := benchgen.CopyHome(home, dst); err != nil {
		b.Fatal(err)
	}
	return dst
}

func benchSpecs(b *testing.B) []struct {
	name string
	spec benchgen.Spec
} {
	specs := []struct {
		name string
		spec benchgen.Spec
	}{{"10k", benchgen.Spec10k}, {"10k-year", benchgen.Spec10k.WithYear()}}
	if os.Getenv("BENCH_LARGE") == "1" {
		specs = append(specs, struct {
			name string
			spec benchgen.Spec
		}{"100k", benchgen.Spec100k}, struct {
			name string
			spec benchgen.Spec
		}{"100k-year", benchgen.Spec100k.WithYear()})
	}
	return specs
}

// dbBytes is the database's used size (pages in use, the write-ahead log's
// committed pages included) as a store opened on home sees it.
func dbBytes(b *testing.B, home string) int64 {
	b.Helper()
	st, err := store.Open(context.Background(), filepath.Join(home, "palace.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	t, err := st.Telemetry(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	return t.FileBytes - t.FreeBytes
}

// latency collects per-op durations and reports p50/p99, the process CPU
// time per op (user + system: a figure other load on the machine barely
// moves, unlike wall-clock percentiles) and the peak RSS.
type latency struct {
	d   []time.Duration
	cpu time.Duration
}

func (l *latency) start() { l.cpu = cpuTime() }

func (l *latency) report(b *testing.B) {
	cpu := cpuTime() - l.cpu
	slices.Sort(l.d)
	if len(l.d) == 0 {
		return
	}
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(len(l.d)), "cpu-ms/op")
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(l.d[len(l.d)/2]), "p50-ms")
	b.ReportMetric(ms(l.d[min(len(l.d)-1, len(l.d)*99/100)]), "p99-ms")
	if kb := statusKB("VmHWM:"); kb > 0 {
		b.ReportMetric(float64(kb)/1024, "peak-rss-MB")
	}
	// Anonymous memory is the process's own; the rest of its RSS is file
	// pages (the database read through its memory map), which the kernel
	// shares with its page cache and may reclaim.
	if kb := statusKB("RssAnon:"); kb > 0 {
		b.ReportMetric(float64(kb)/1024, "anon-MB")
	}
}

// resetPeakRSS clears the process's high-water mark (Linux), so the peak
// reported is that of the benchmark, not of generating the palace.
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// cpuTime is the process's user + system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// statusKB reads a kB field of /proc/self/status (Linux; 0 elsewhere).
func statusKB(field string) int {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			return n
		}
	}
	return 0
}

// BenchmarkContext measures Host.Context warm and in-process on generated
// palaces (targets: p99 ≤ 10 ms at 10k cards, ≤ 40 ms at 100k), rotating
// over benchRequests, with and without a year of request history
// ("-year": 200k requests over 365 days, default retention). "read" is a
// dry run; "write" also records the request's telemetry in a copy of the
// palace and reports the database bytes it grew by per request
// (bytes/req; target ≤ 2 KB at 10k). db-MB is the database's used size.
func BenchmarkContext(b *testing.B) {
	for _, s := range benchSpecs(b) {
		for _, mode := range []string{"read", "write"} {
			b.Run(s.name+"/"+mode, func(b *testing.B) {
				home, repo := benchPalace(b, s.spec)
				if mode == "write" {
					home = writableCopy(b, home)
				}
				h, err := host.Open(context.Background(), host.Options{Home: home, Cwd: repo, Now: func() time.Time { return benchEpoch }})
				if err != nil {
					b.Fatal(err)
				}
				defer h.Close()
				ctx := context.Background()
				for _, r := range benchRequests { // warm the page cache and the policies
					r.DryRun = true
					if _, err := h.Pack().Context(ctx, r); err != nil {
						b.Fatal(err)
					}
				}
				size := dbBytes(b, home)
				resetPeakRSS()
				var lat latency
				b.ReportAllocs()
				b.ResetTimer()
				lat.start()
				for i := 0; b.Loop(); i++ {
					r := benchRequests[i%len(benchRequests)]
					r.DryRun = mode == "read"
					start := time.Now()
					p, err := h.Pack().Context(ctx, r)
					lat.d = append(lat.d, time.Since(start))
					if err != nil || p.Selection.Considered == 0 {
						b.Fatalf("context: %v (considered %d)", err, p.Selection.Considered)
					}
				}
				b.StopTimer()
				lat.report(b)
				if err := h.SettleTelemetry(); err != nil {
					b.Fatal(err)
				}
				grown := dbBytes(b, home)
				b.ReportMetric(float64(grown)/(1<<20), "db-MB")
				if mode == "write" {
					b.ReportMetric(float64(grown-size)/float64(len(lat.d)), "bytes/req")
				}
			})
		}
	}
}

// BenchmarkBrief measures Host.Brief on the same requests (target: ≤ 2×
// the context p99).
func BenchmarkBrief(b *testing.B) {
	for _, s := range benchSpecs(b) {
		b.Run(s.name, func(b *testing.B) {
			home, repo := benchPalace(b, s.spec)
			h, err := host.Open(context.Background(), host.Options{Home: home, Cwd: repo, Now: func() time.Time { return benchEpoch }})
			if err != nil {
				b.Fatal(err)
			}
			defer h.Close()
			ctx := context.Background()
			brief := func(r pack.ContextRequest) pack.BriefRequest {
				return pack.BriefRequest{Query: r.Query, File: r.File, Language: r.Language, Field: r.Field, Intents: r.Intents, Tools: r.Tools}
			}
			for _, r := range benchRequests {
				if _, err := h.Pack().Brief(ctx, brief(r)); err != nil {
					b.Fatal(err)
				}
			}
			resetPeakRSS()
			var lat latency
			b.ReportAllocs()
			b.ResetTimer()
			lat.start()
			for i := 0; b.Loop(); i++ {
				start := time.Now()
				_, err := h.Pack().Brief(ctx, brief(benchRequests[i%len(benchRequests)]))
				lat.d = append(lat.d, time.Since(start))
				if err != nil {
					b.Fatal(err)
				}
			}
			lat.report(b)
		})
	}
}

// BenchmarkAudit measures a full audit of the visible anchors (no target;
// reported for reference).
func BenchmarkAudit(b *testing.B) {
	home, repo := benchPalace(b, benchgen.Spec10k)
	h, err := host.Open(context.Background(), host.Options{Home: home, Cwd: repo, Now: func() time.Time { return benchEpoch }})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := h.Audit(context.Background(), audit.Filter{}); err != nil {
			b.Fatal(err)
		}
	}
}

// codeCards is how many code-citing cards BenchmarkContextCitedCode adds.
const codeCards = 1000

// BenchmarkContextCitedCode is BenchmarkContext/read on the same palaces
// with 1,000 more promoted cards whose evidence cites line ranges of 250
// source files in the checkout (a tenth of the files since edited so their
// cited lines moved, a tenth so some changed): every request looks at the
// code its candidates cite (targets as BenchmarkContext: p99 ≤ 10 ms at
// 10k cards, ≤ 40 ms at 100k). code-items/op counts the pack items that
// cite code, stale-items/op those marked stale; reads is how many times a
// cited file was read over the whole run (at most once per file and
// change: 250).
func BenchmarkContextCitedCode(b *testing.B) {
	for _, s := range benchSpecs(b) {
		if strings.HasSuffix(s.name, "-year") {
			continue
		}
		b.Run(s.name, func(b *testing.B) {
			dir := filepath.Join(moduleRoot(b), ".bench", fmt.Sprintf("palace-%s-code%d-v2", s.spec.Key(), codeCards))
			home, repo, err := benchgen.Palace(context.Background(), dir, s.spec, nil, func(h *host.Host) error {
				_, err := benchgen.CodeCitations(context.Background(), h, codeCards, s.spec.Seed)
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
			h, err := host.Open(context.Background(), host.Options{Home: home, Cwd: repo, Now: func() time.Time { return benchEpoch }})
			if err != nil {
				b.Fatal(err)
			}
			defer h.Close()
			ctx := context.Background()
			isCode := func(id string) bool { return strings.HasPrefix(id, "kc_code") }
			for _, r := range benchRequests {
				r.DryRun = true
				if _, err := h.Pack().Context(ctx, r); err != nil {
					b.Fatal(err)
				}
			}
			resetPeakRSS()
			var lat latency
			codeItems, staleItems := 0, 0
			b.ReportAllocs()
			b.ResetTimer()
			lat.start()
			for i := 0; b.Loop(); i++ {
				r := benchRequests[i%len(benchRequests)]
				r.DryRun = true
				start := time.Now()
				p, err := h.Pack().Context(ctx, r)
				lat.d = append(lat.d, time.Since(start))
				if err != nil || p.Selection.Considered == 0 {
					b.Fatalf("context: %v (considered %d)", err, p.Selection.Considered)
				}
				for _, it := range p.Items {
					if isCode(it.ID) {
						codeItems++
						if it.Stale != nil {
							staleItems++
						}
					}
				}
			}
			b.StopTimer()
			lat.report(b)
			b.ReportMetric(float64(codeItems)/float64(len(lat.d)), "code-items/op")
			b.ReportMetric(float64(staleItems)/float64(len(lat.d)), "stale-items/op")
			if codeItems == 0 || staleItems == 0 {
				b.Fatalf("the packs hold %d code-citing items, %d stale: the benchmark measures nothing", codeItems, staleItems)
			}
		})
	}
}
