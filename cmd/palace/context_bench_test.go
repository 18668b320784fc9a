package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/palacehq/palace/benchgen"
)

// benchContextPalace returns a writable copy of the generated 10k palace
// (cached under <module>/.bench/ as host's benchmarks cache it) and its
// checkout.
func benchContextPalace(b *testing.B) (home, repo string) {
	b.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		b.Fatal(err)
	}
	spec := benchgen.Spec10k
	cached, repo, err := benchgen.Palace(context.Background(), filepath.Join(root, ".bench", "palace-"+spec.Key()), spec, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	home = filepath.Join(b.TempDir(), "home")
	if err := benchgen.CopyHome(cached, home); err != nil {
		b.Fatal(err)
	}
	return home, repo
}

// benchContextArgs rotate like host's context benchmark requests.
var benchContextArgs = [][]string{
	{"sqlite lock timeout", "--file", "store/db.go", "--field", "storage", "--intent", "debug"},
	{"--file", "api/handler.go", "--intent", "review"},
	{"retry deadline context cancel", "--field", "api"},
	{"flaky ci pipeline runner", "--intent", "test", "--intent", "investigate", "--tool", "go"},
	{},
	{"--file", "host/context.go", "--language", "go", "--intent", "refactor", "--intent", "perf", "--instruction", "answer briefly"},
}

// runContext runs one `palace context` process in agent mode.
func runContext(home, repo string, args []string, dry bool) error {
	_, err := runContextCPU(home, repo, args, dry)
	return err
}

// runContextCPU is runContext that also returns the process's CPU time
// (user + system), a figure other load on the machine barely moves.
func runContextCPU(home, repo string, args []string, dry bool) (time.Duration, error) {
	full := append([]string{"context", "--format", "json"}, args...)
	if dry {
		full = append(full, "--dry-run")
	}
	cmd := exec.Command(palaceBin, full...)
	cmd.Dir = repo
	cmd.Env = append(filteredEnv(), "PALACE_HOME="+home, "PALACE_MODE=agent")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdout = io.Discard
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("palace %v: %w: %s", full, err, stderr.Bytes())
	}
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
}

func pct(d []time.Duration, p int) float64 {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[min(len(s)-1, len(s)*p/100)].Microseconds()) / 1000
}

// BenchmarkContextProcessWrite runs `palace context` as a new process on
// the 10k palace, each iteration the same request twice in turn: with
// --dry-run and without (which records the request's telemetry). Target:
// the recording costs ≤ 3 ms at p50 (write-minus-dry-p50-ms, and the
// paired per-iteration difference paired-p50-ms). The processes' CPU time
// (*-cpu-*) is reported too: on a loaded machine it is the steadier
// figure.
func BenchmarkContextProcessWrite(b *testing.B) {
	home, repo := benchContextPalace(b)
	for _, a := range benchContextArgs { // warm the page cache and the policy cache
		if err := runContext(home, repo, a, true); err != nil {
			b.Fatal(err)
		}
	}
	var dry, write, paired, dryCPU, writeCPU, pairedCPU []time.Duration
	for i := 0; b.Loop(); i++ {
		a := benchContextArgs[i%len(benchContextArgs)]
		// Alternate which runs first, so neither always follows the other.
		var d, w, dc, wc time.Duration
		for k := range 2 {
			isDry := (i+k)%2 == 0
			start := time.Now()
			cpu, err := runContextCPU(home, repo, a, isDry)
			if err != nil {
				b.Fatal(err)
			}
			if isDry {
				d, dc = time.Since(start), cpu
			} else {
				w, wc = time.Since(start), cpu
			}
		}
		dry, write, paired = append(dry, d), append(write, w), append(paired, w-d)
		dryCPU, writeCPU, pairedCPU = append(dryCPU, dc), append(writeCPU, wc), append(pairedCPU, wc-dc)
	}
	b.ReportMetric(pct(dryCPU, 50), "dry-cpu-p50-ms")
	b.ReportMetric(pct(writeCPU, 50), "write-cpu-p50-ms")
	b.ReportMetric(pct(pairedCPU, 50), "paired-cpu-p50-ms")
	b.ReportMetric(pct(dry, 50), "dry-p50-ms")
	b.ReportMetric(pct(write, 50), "write-p50-ms")
	b.ReportMetric(pct(write, 50)-pct(dry, 50), "write-minus-dry-p50-ms")
	b.ReportMetric(pct(paired, 50), "paired-p50-ms")
	b.ReportMetric(pct(dry, 99), "dry-p99-ms")
	b.ReportMetric(pct(write, 99), "write-p99-ms")
}

// mcpClient is a bare line-delimited JSON-RPC client of one `palace mcp`.
type mcpClient struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
	id    int
}

func startMCP(b *testing.B, home, repo string) *mcpClient {
	cmd := exec.Command(palaceBin, "mcp")
	cmd.Dir = repo
	cmd.Env = append(filteredEnv(), "PALACE_HOME="+home, "PALACE_MODE=agent")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	c := &mcpClient{cmd: cmd, stdin: stdin, out: bufio.NewReaderSize(stdout, 1<<20)}
	b.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	if _, err := c.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "bench", "version": "1"}}); err != nil {
		b.Fatal(err)
	}
	if _, err := stdin.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")); err != nil {
		b.Fatal(err)
	}
	return c
}

func (c *mcpClient) call(method string, params any) ([]byte, error) {
	c.id++
	req, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	if _, err := c.stdin.Write(append(req, '\n')); err != nil {
		return nil, err
	}
	line, err := c.out.ReadBytes('\n')
	if err != nil {
		return nil, err
	}
	if want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":`, c.id); !bytes.HasPrefix(line, []byte(want)) || bytes.Contains(line, []byte(`"isError":true`)) {
		return nil, fmt.Errorf("answer to %s #%d: %.300s", method, c.id, line)
	}
	return line, nil
}

// mcpArgs are benchContextArgs as palace_context arguments.
var mcpArgs = []map[string]any{
	{"query": "sqlite lock timeout", "file": "store/db.go", "field": "storage", "intents": []string{"debug"}},
	{"file": "api/handler.go", "intents": []string{"review"}},
	{"query": "retry deadline context cancel", "field": "api"},
	{"query": "flaky ci pipeline runner", "intents": []string{"test", "investigate"}, "tools": []string{"go"}},
	{},
	{"file": "host/context.go", "language": "go", "intents": []string{"refactor", "perf"}, "instructions": []string{"answer briefly"}},
}

// BenchmarkContextConcurrent runs 8 agents that each start `palace context`
// processes back to back and 8 agents that each ask their own `palace mcp`
// server for palace_context, all at once on one 10k palace, first with
// --dry-run / dry_run and then recording telemetry. Each b.N op is one
// round in which every agent makes 3 requests. Target: 0 errors, and the
// recording p99 next to the dry-run p99 (proc-*, mcp-* per mode).
func BenchmarkContextConcurrent(b *testing.B) {
	const agents, perRound = 8, 3
	home, repo := benchContextPalace(b)
	servers := make([]*mcpClient, agents)
	for i := range servers {
		servers[i] = startMCP(b, home, repo)
	}
	for i, s := range servers { // warm each server's policies
		if _, err := s.call("tools/call", map[string]any{"name": "palace_context", "arguments": map[string]any{"dry_run": true}}); err != nil {
			b.Fatalf("server %d: %v", i, err)
		}
	}
	type result struct{ proc, mcp []time.Duration }
	res := map[string]*result{"dry": {}, "write": {}}
	var errs atomic.Int64
	var firstErr atomic.Value
	fail := func(err error) {
		errs.Add(1)
		firstErr.CompareAndSwap(nil, err)
	}
	round := func(mode string) {
		dry := mode == "dry"
		var mu sync.Mutex
		var wg sync.WaitGroup
		for a := range agents {
			wg.Add(2)
			go func() {
				defer wg.Done()
				for k := range perRound {
					start := time.Now()
					if err := runContext(home, repo, benchContextArgs[(a+k)%len(benchContextArgs)], dry); err != nil {
						fail(err)
					}
					d := time.Since(start)
					mu.Lock()
					res[mode].proc = append(res[mode].proc, d)
					mu.Unlock()
				}
			}()
			go func() {
				defer wg.Done()
				for k := range perRound {
					args := map[string]any{"dry_run": dry}
					for key, v := range mcpArgs[(a+k)%len(mcpArgs)] {
						args[key] = v
					}
					start := time.Now()
					if _, err := servers[a].call("tools/call", map[string]any{"name": "palace_context", "arguments": args}); err != nil {
						fail(err)
					}
					d := time.Since(start)
					mu.Lock()
					res[mode].mcp = append(res[mode].mcp, d)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
	}
	for b.Loop() {
		round("dry")
		round("write")
	}
	for _, mode := range []string{"dry", "write"} {
		b.ReportMetric(pct(res[mode].proc, 50), mode+"-proc-p50-ms")
		b.ReportMetric(pct(res[mode].proc, 99), mode+"-proc-p99-ms")
		b.ReportMetric(pct(res[mode].mcp, 50), mode+"-mcp-p50-ms")
		b.ReportMetric(pct(res[mode].mcp, 99), mode+"-mcp-p99-ms")
	}
	b.ReportMetric(float64(errs.Load()), "errors")
	if err := firstErr.Load(); err != nil {
		b.Errorf("%d errors, the first: %v", errs.Load(), err)
	}
}
