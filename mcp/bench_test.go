package mcp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palacehq/palace/benchgen"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/pack"
	"github.com/palacehq/palace/mcp"
)

// benchPalace returns the generated 10k palace (benchgen.Spec10k), cached
// under <module>/.bench/palace-<spec key>/ exactly as host's context
// benchmarks cache it, so whichever runs first generates it for both
// (about half a minute).
func benchPalace(b *testing.B) (home, repo string) {
	b.Helper()
	spec := benchgen.Spec10k
	root, err := filepath.Abs("..")
	if err != nil {
		b.Fatal(err)
	}
	home, repo, err = benchgen.Palace(context.Background(), filepath.Join(root, ".bench", "palace-"+spec.Key()), spec, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	return home, repo
}

// benchRequest is one rotating request, as host sees it and as a tool call.
type benchRequest struct {
	host pack.ContextRequest
	args map[string]any
}

// benchRequests mirror host's context benchmark requests: with and without
// a query, file, field, intents and tools. All are dry runs, so the cached
// palace stays as generated and every call sees the same data.
var benchRequests = []benchRequest{
	{pack.ContextRequest{Query: "sqlite lock timeout", File: "store/db.go", Field: "storage", Intents: []string{"debug"}, DryRun: true},
		map[string]any{"query": "sqlite lock timeout", "file": "store/db.go", "field": "storage", "intents": []string{"debug"}, "dry_run": true}},
	{pack.ContextRequest{File: "api/handler.go", Intents: []string{"review"}, DryRun: true},
		map[string]any{"file": "api/handler.go", "intents": []string{"review"}, "dry_run": true}},
	{pack.ContextRequest{Query: "retry deadline context cancel", Field: "api", DryRun: true},
		map[string]any{"query": "retry deadline context cancel", "field": "api", "dry_run": true}},
	{pack.ContextRequest{Query: "flaky ci pipeline runner", Intents: []string{"test", "investigate"}, Tools: []string{"go"}, DryRun: true},
		map[string]any{"query": "flaky ci pipeline runner", "intents": []string{"test", "investigate"}, "tools": []string{"go"}, "dry_run": true}},
	{pack.ContextRequest{DryRun: true}, map[string]any{"dry_run": true}},
	{pack.ContextRequest{File: "host/context.go", Language: "go", Intents: []string{"refactor", "perf"}, Instructions: []string{"answer briefly"}, DryRun: true},
		map[string]any{"file": "host/context.go", "language": "go", "intents": []string{"refactor", "perf"}, "instructions": []string{"answer briefly"}, "dry_run": true}},
}

// BenchmarkContextStdio measures palace_context the way an agent gets it —
// the real binary serving `palace mcp` over stdio — against host.Context
// in-process, on the 10k palace. Each iteration runs the same request both
// ways, interleaved, so both see the same machine state. Two clients:
//
//   - raw writes the JSON-RPC line and reads the answer's line: the
//     server's whole stdio path (decode, host, encode, pipe) and nothing of
//     any client library;
//   - go-sdk is the go-sdk client, which also decodes the whole result
//     (about 80 KB for these packs) into Go values several times over.
//
// Target: stdio p99 ≤ in-process p99 + 3 ms (overhead-p99-ms);
// paired-overhead-* are percentiles of each iteration's own difference.
func BenchmarkContextStdio(b *testing.B) {
	home, repo := benchPalace(b)
	bin := filepath.Join(b.TempDir(), "palace")
	build := exec.Command("go", "build", "-o", bin, "github.com/palacehq/palace/cmd/palace")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build palace: %v\n%s", err, out)
	}
	ctx := context.Background()
	// Both sides run on the real clock: the server has no other.
	h, err := host.Open(ctx, host.Options{Home: home, Cwd: repo, Mode: host.Agent})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	server := func() *exec.Cmd {
		cmd := exec.Command(bin, "mcp")
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "PALACE_HOME="+home, "PALACE_MODE=agent")
		return cmd
	}
	inproc := func(r benchRequest) {
		p, err := h.Pack().Context(ctx, r.host)
		if err != nil || p.Selection.Considered == 0 {
			b.Fatalf("in-process context: %v (considered %d)", err, p.Selection.Considered)
		}
	}
	b.Run("raw", func(b *testing.B) {
		call := rawClient(b, server())
		measure(b, inproc, func(r benchRequest) { call(r.args) })
	})
	b.Run("go-sdk", func(b *testing.B) {
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "palace-bench", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: server()}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		measure(b, inproc, func(r benchRequest) {
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: mcp.ToolContext, Arguments: r.args})
			if err != nil || res.IsError || len(res.Content) == 0 {
				b.Fatalf("palace_context over stdio: %v %v", err, res)
			}
		})
	})
}

// rawClient starts cmd, initializes an MCP session by hand and returns a
// function that calls palace_context and waits for the answer's line.
func rawClient(b *testing.B, cmd *exec.Cmd) func(args map[string]any) {
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
	b.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	br := bufio.NewReaderSize(stdout, 1<<20)
	id := 0
	roundTrip := func(method string, params any) []byte {
		id++
		req, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := stdin.Write(append(req, '\n')); err != nil {
			b.Fatal(err)
		}
		line, err := br.ReadBytes('\n')
		if err != nil {
			b.Fatal(err)
		}
		if want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":`, id); !bytes.HasPrefix(line, []byte(want)) {
			b.Fatalf("answer to %s #%d: %.300s", method, id, line)
		}
		return line
	}
	roundTrip("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "raw", "version": "1"}})
	if _, err := stdin.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")); err != nil {
		b.Fatal(err)
	}
	return func(args map[string]any) {
		if line := roundTrip("tools/call", map[string]any{"name": mcp.ToolContext, "arguments": args}); bytes.Contains(line, []byte(`"isError":true`)) {
			b.Fatalf("palace_context: %.300s", line)
		}
	}
}

// measure runs in-process and stdio calls of the same rotating requests in
// turn and reports their latencies.
func measure(b *testing.B, inproc, stdio func(benchRequest)) {
	for range 3 { // warm the page cache, the policies and both processes
		for _, r := range benchRequests {
			inproc(r)
			stdio(r)
		}
	}
	var in, io []time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		r := benchRequests[i%len(benchRequests)]
		start := time.Now()
		inproc(r)
		mid := time.Now()
		stdio(r)
		in, io = append(in, mid.Sub(start)), append(io, time.Since(mid))
	}
	b.StopTimer()
	// paired is each iteration's stdio time minus its in-process time: the
	// overhead of the same request, free of the drift between iterations.
	paired := make([]time.Duration, len(in))
	for i := range in {
		paired[i] = io[i] - in[i]
	}
	slices.Sort(in)
	slices.Sort(io)
	slices.Sort(paired)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	pct := func(d []time.Duration, p int) time.Duration { return d[min(len(d)-1, len(d)*p/100)] }
	b.ReportMetric(ms(pct(in, 50)), "inproc-p50-ms")
	b.ReportMetric(ms(pct(in, 99)), "inproc-p99-ms")
	b.ReportMetric(ms(pct(io, 50)), "stdio-p50-ms")
	b.ReportMetric(ms(pct(io, 99)), "stdio-p99-ms")
	b.ReportMetric(ms(pct(io, 99)-pct(in, 99)), "overhead-p99-ms")
	b.ReportMetric(ms(pct(paired, 50)), "paired-overhead-p50-ms")
	b.ReportMetric(ms(pct(paired, 99)), "paired-overhead-p99-ms")
}
