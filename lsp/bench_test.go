package lsp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/palacehq/palace/benchgen"
	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/intake"
	"github.com/palacehq/palace/lsp"
)

// The benchmarks run on the standard 10k-card palace (benchgen.Spec10k)
// plus benchTriggerCards authoritative cards with trigger patterns visible
// from the checkout (the generator writes intents and tool needs, not
// patterns), cached under <module>/.bench/. Latencies are measured at the
// client, over the JSON-RPC pipe, and reported as p50/p99 in ms.

const benchTriggerCards = 500

// benchTriggerKey names the trigger cards' generator in the cache directory;
// change it when addTriggerCards changes so a stale palace is not reused.
const benchTriggerKey = "a2"

var benchWords = strings.Fields(`store sqlite wal lock test error api request handler cache index query
import build deploy config retry timeout busy transaction commit migration schema table file path module
context deadline cancel goroutine channel mutex buffer stream json http client server session token auth
log trace metric latency benchmark worker batch job policy rego gate card evidence anchor`)

func moduleRoot(tb testing.TB) string {
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		if filepath.Dir(dir) == dir {
			tb.Fatal("no go.mod above the test directory")
		}
		dir = filepath.Dir(dir)
	}
}

// benchPalace returns the home and checkout of the cached benchmark palace
// (the 10k palace plus the trigger cards), generating it on first use.
func benchPalace(b *testing.B) (home, repo string) {
	b.Helper()
	spec := benchgen.Spec10k
	dir := filepath.Join(moduleRoot(b), ".bench", fmt.Sprintf("lsp-%s-t%d-%s", spec.Key(), benchTriggerCards, benchTriggerKey))
	start := time.Now()
	home, repo, err := benchgen.Palace(context.Background(), dir, spec, nil, addTriggerCards)
	if err != nil {
		b.Fatal(err)
	}
	if d := time.Since(start); d > time.Second {
		b.Logf("generated the benchmark palace in %s", d.Round(time.Millisecond))
	}
	return home, repo
}

// addTriggerCards writes benchTriggerCards authoritative cards with trigger
// patterns visible from the checkout.
func addTriggerCards(h *host.Host) error {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(7, 7))
	word := func() string { return benchWords[r.IntN(len(benchWords))] }
	// Only dao_tian may start at the global anchor, so the global slot
	// carries the dao_tian card.
	anchors := []string{"worktree", "worktree", "repo", "global"}
	benchTiers := []string{"dao_ren", "shu", "qi", "dao_tian"}
	for i := range benchTriggerCards {
		ev, err := h.Intake().Record(ctx, intake.RecordRequest{Content: fmt.Sprintf("bench evidence %d: %s %s %s", i, word(), word(), word()), Anchor: "global"})
		if err != nil {
			return err
		}
		var pat string
		switch i % 4 {
		case 0:
			pat = `\b` + word() + `\.` + strings.ToUpper(word()[:1]) + word()[1:] + `\(`
		case 1:
			pat = `(?i)` + word() + `\s+` + word()
		case 2:
			pat = `\b` + word() + word() + `\b`
		default:
			pat = word() + `_` + strconv.Itoa(i%50)
		}
		scope := domain.Scope{}
		if i%3 == 0 {
			scope.Languages = []string{"go"}
		}
		if i%5 == 0 {
			scope.Paths = []string{"store/**"}
		}
		_, err = h.Distill(ctx, intake.DistillRequest{
			Statement: fmt.Sprintf("Bench rule %d: %s before %s", i, word(), word()), Tier: benchTiers[i%len(benchTiers)],
			Supporting: []string{ev.ID}, Anchor: anchors[i%len(anchors)], Scope: scope,
			Trigger: domain.Trigger{Patterns: []string{pat}, Intents: []string{word()}},
			Direct:  true, Status: "promoted",
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// benchDocument is a Go file of n lines made of the benchmark words, so a
// realistic share of lines match some trigger.
func benchDocument(n int) string {
	r := rand.New(rand.NewPCG(3, 4))
	word := func() string { return benchWords[r.IntN(len(benchWords))] }
	var b strings.Builder
	b.WriteString("package store\n\nimport \"database/sql\"\n\n")
	for i := 4; i < n; i++ {
		switch i % 5 {
		case 0:
			fmt.Fprintf(&b, "\t%s, err := %s.%s%s(%q)\n", word(), word(), strings.ToUpper(word()[:1]), word()[1:], word())
		case 1:
			fmt.Fprintf(&b, "\t// %s %s %s_%d when the %s %s\n", word(), word(), word(), i%50, word(), word())
		case 2:
			fmt.Fprintf(&b, "\tif err != nil { return fmt.Errorf(\"%s %s: %%w\", err) }\n", word(), word())
		default:
			fmt.Fprintf(&b, "\t%s%s := %s(%s, %d)\n", word(), word(), word(), word(), i)
		}
	}
	return b.String()
}

// latencies collects per-operation durations and reports p50/p99.
type latencies []time.Duration

func (l latencies) report(b *testing.B, unit string) {
	if len(l) == 0 {
		return
	}
	slices.Sort(l)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(l[len(l)/2]), "p50-"+unit)
	b.ReportMetric(ms(l[min(len(l)-1, len(l)*99/100)]), "p99-"+unit)
}

// benchSession starts a server on the benchmark palace and opens the
// benchmark document in it.
func benchSession(b *testing.B, opts lsp.Options) (*client, uri.URI, *fixture, string) {
	// The server runs in this process: measure it with the collector
	// target `palace lsp` sets.
	if _, set := os.LookupEnv("GOGC"); !set {
		prev := debug.SetGCPercent(lsp.GCPercent)
		b.Cleanup(func() { debug.SetGCPercent(prev) })
	}
	home, repo := benchPalace(b)
	f := &fixture{t: b, home: home, repo: repo}
	opts.Home = home
	opts.Log = discard{}
	c := start(b, opts, nil)
	c.initialize(f, nil)
	text := benchDocument(1000)
	path := filepath.Join(repo, "store", "bench.go")
	u := c.open(path, "go", text)
	return c, u, f, text
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func BenchmarkHover(b *testing.B) {
	c, u, _, _ := benchSession(b, lsp.Options{})
	c.hover(u, 10, 3) // warm the caches
	var l latencies
	for i := 0; b.Loop(); i++ {
		t := time.Now()
		c.hover(u, uint32(5+i%990), uint32(2+i%7))
		l = append(l, time.Since(t))
	}
	l.report(b, "ms")
}

func BenchmarkCodeLens(b *testing.B) {
	c, u, _, _ := benchSession(b, lsp.Options{})
	params := &protocol.CodeLensParams{TextDocument: protocol.TextDocumentIdentifier{URI: u}}
	var lens []protocol.CodeLens
	c.mustCall(protocol.MethodTextDocumentCodeLens, params, &lens)
	b.Logf("lens: %s", lens[0].Command.Title)
	var l latencies
	for b.Loop() {
		t := time.Now()
		c.mustCall(protocol.MethodTextDocumentCodeLens, params, &lens)
		l = append(l, time.Since(t))
	}
	l.report(b, "ms")
}

// BenchmarkInlayHint asks for the hints of a 60-line viewport, as editors
// do, moving over the document; "document" asks for all 1000 lines.
func BenchmarkInlayHint(b *testing.B) {
	for _, span := range []struct {
		name  string
		lines uint32
	}{{"viewport", 60}, {"document", 1000}} {
		b.Run(span.name, func(b *testing.B) {
			c, u, _, _ := benchSession(b, lsp.Options{})
			var hints []protocol.InlayHint
			c.mustCall(protocol.MethodTextDocumentInlayHint, &protocol.InlayHintParams{TextDocument: protocol.TextDocumentIdentifier{URI: u},
				Range: protocol.Range{End: protocol.Position{Line: 1000}}}, &hints)
			b.Logf("%d inlay hints over 1000 lines", len(hints))
			var l latencies
			for i := 0; b.Loop(); i++ {
				first := uint32(i*37) % (1000 - span.lines + 1)
				params := &protocol.InlayHintParams{TextDocument: protocol.TextDocumentIdentifier{URI: u},
					Range: protocol.Range{Start: protocol.Position{Line: first}, End: protocol.Position{Line: first + span.lines}}}
				t := time.Now()
				c.mustCall(protocol.MethodTextDocumentInlayHint, params, &hints)
				l = append(l, time.Since(t))
			}
			l.report(b, "ms")
		})
	}
}

// BenchmarkInlayHintAfterEdit is the per-keystroke case: every request
// follows an edit, so the 1000-line document is matched again.
func BenchmarkInlayHintAfterEdit(b *testing.B) {
	c, u, _, _ := benchSession(b, lsp.Options{})
	params := &protocol.InlayHintParams{TextDocument: protocol.TextDocumentIdentifier{URI: u}, Range: protocol.Range{End: protocol.Position{Line: 60}}}
	var hints []protocol.InlayHint
	var l latencies
	for i := 0; b.Loop(); i++ {
		c.notify(protocol.MethodTextDocumentDidChange, &protocol.DidChangeTextDocumentParams{
			TextDocument: protocol.VersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: u}, Version: int32(i + 2)},
			ContentChanges: []protocol.TextDocumentContentChangeEvent{&protocol.TextDocumentContentChangePartial{
				Range: protocol.Range{Start: protocol.Position{Line: 20, Character: 1}, End: protocol.Position{Line: 20, Character: 1}}, Text: "x",
			}},
		})
		t := time.Now()
		c.mustCall(protocol.MethodTextDocumentInlayHint, params, &hints)
		l = append(l, time.Since(t))
	}
	l.report(b, "ms")
}

// BenchmarkDiagnosticsAfterSave measures, per save, the time from writing a
// file to the client receiving its diagnostics: a policy file alternately
// broken and fixed (the policies watcher debounces 75 ms, then compiles),
// and a box alternately with and without a secret.
func BenchmarkDiagnosticsAfterSave(b *testing.B) {
	for _, kind := range []string{"policy", "box"} {
		b.Run(kind, func(b *testing.B) {
			home, repo := benchPalace(b)
			work := filepath.Join(b.TempDir(), "repo")
			copyRepo(b, repo, work)
			f := &fixture{t: b, home: writableHome(b, home), repo: work}
			c := start(b, lsp.Options{Home: f.home, Log: discard{}}, nil)
			c.initialize(f, nil)
			rel, bad, good := ".palace/policies/gate.rego",
				"package palace.gate\n\nimport rego.v1\n\ndecision := {\"allow\": true\n",
				"package palace.gate\n\nimport rego.v1\n\ndecision := {\"allow\": true, \"reasons\": [], \"missing\": {}}\n"
			if kind == "box" {
				letter := `{"ts":"2025-06-01T12:00:00Z","agent":"a","class":"c","what":"w%d"%s}` + "\n"
				rel, bad, good = ".palace/inbox.jsonl", fmt.Sprintf(letter, 0, `,"snippet":"AKIAIOSFODNN7EXAMPLE"`), fmt.Sprintf(letter, 0, "")
			}
			path := filepath.Join(work, rel)
			u := uri.File(path)
			f.write(rel, good)
			var l latencies
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				content, want := bad, true
				if i%2 == 1 {
					content, want = good, false
				}
				t := time.Now()
				f.write(rel, content)
				c.waitDiagnostics(u, func(ds []protocol.Diagnostic) bool { return (len(ds) > 0) == want })
				l = append(l, time.Since(t))
				c.mu.Lock()
				c.diags[u] = nil
				c.mu.Unlock()
			}
			l.report(b, "ms")
		})
	}
}

// BenchmarkCrossProcessVisibility measures the time from another writer's
// commit to the client being asked to refresh, with no request in between:
// the data_version poll alone notices it. "host" commits through a second
// Host (its own connections, as an MCP server in this process would);
// "cli" runs `palace record` and measures from the process's exit.
func BenchmarkCrossProcessVisibility(b *testing.B) {
	for _, writer := range []string{"host", "cli"} {
		b.Run(writer, func(b *testing.B) {
			home, repo := benchPalace(b)
			home = writableHome(b, home)
			f := &fixture{t: b, home: home, repo: repo}
			c := start(b, lsp.Options{Home: home, Log: discard{}}, nil)
			c.initialize(f, nil)
			c.open(filepath.Join(repo, "store", "bench.go"), "go", benchDocument(200))
			other, err := host.Open(context.Background(), host.Options{Home: home, Cwd: repo, Mode: host.Human})
			if err != nil {
				b.Fatal(err)
			}
			defer other.Close()
			time.Sleep(300 * time.Millisecond) // let the opening refreshes settle
			var l latencies
			for i := 0; b.Loop(); i++ {
				c.mu.Lock()
				before := c.refreshes[protocol.MethodWorkspaceCodeLensRefresh]
				c.mu.Unlock()
				content := fmt.Sprintf("another process %d", i)
				if writer == "host" {
					if _, err := other.Intake().Record(context.Background(), intake.RecordRequest{Content: content}); err != nil {
						b.Fatal(err)
					}
				} else {
					f.palace("record", "--content", content)
				}
				t := time.Now()
				c.mu.Lock()
				for c.refreshes[protocol.MethodWorkspaceCodeLensRefresh] == before {
					c.cond.Wait()
				}
				c.mu.Unlock()
				l = append(l, time.Since(t))
			}
			l.report(b, "ms")
		})
	}
}

// BenchmarkResidentMemory runs the real `palace lsp` on the 10k palace,
// drives every feature over the benchmark document, and reports the
// process's peak resident set (VmHWM).
func BenchmarkResidentMemory(b *testing.B) {
	home, repo := benchPalace(b)
	for b.Loop() {
		cmd := exec.Command(palaceBin, "lsp")
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "PALACE_HOME="+home, "PALACE_MODE=")
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		r := bufio.NewReader(out)
		id := 0
		call := func(method string, params any) {
			id++
			body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
			fmt.Fprintf(in, "Content-Length: %d\r\n\r\n%s", len(body), body)
			for {
				n := 0
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						b.Fatal(err)
					}
					if line = strings.TrimSpace(line); line == "" {
						break
					}
					if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
						n, _ = strconv.Atoi(v)
					}
				}
				buf := make([]byte, n)
				if _, err := io.ReadFull(r, buf); err != nil {
					b.Fatal(err)
				}
				var m map[string]any
				_ = json.Unmarshal(buf, &m)
				if v, ok := m["id"].(float64); ok && int(v) == id && m["method"] == nil {
					return
				}
			}
		}
		notify := func(method string, params any) {
			body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
			fmt.Fprintf(in, "Content-Length: %d\r\n\r\n%s", len(body), body)
		}
		u := string(uri.File(filepath.Join(repo, "store", "bench.go")))
		call("initialize", map[string]any{"processId": nil, "rootUri": "file://" + repo, "capabilities": map[string]any{}})
		notify("initialized", map[string]any{})
		notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": u, "languageId": "go", "version": 1, "text": benchDocument(1000)}})
		for i := range 200 {
			call("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": u}, "position": map[string]any{"line": 5 + i%900, "character": 3}})
			call("textDocument/codeLens", map[string]any{"textDocument": map[string]any{"uri": u}})
			call("textDocument/inlayHint", map[string]any{"textDocument": map[string]any{"uri": u}, "range": map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 1000, "character": 0}}})
		}
		call("palace/context", map[string]any{"uri": u, "dry_run": true})
		kb := vmHWM(b, cmd.Process.Pid)
		call("shutdown", nil)
		notify("exit", nil)
		_ = cmd.Wait()
		b.ReportMetric(float64(kb)/1024, "peak-rss-MB")
	}
}

func vmHWM(b *testing.B, pid int) int {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			return n
		}
	}
	return 0
}

// writableHome copies a cached home so a benchmark that writes leaves the
// cache as it was.
func writableHome(b *testing.B, home string) string {
	dst := filepath.Join(b.TempDir(), "home")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"palace.db", "palace.db-wal"} {
		raw, err := os.ReadFile(filepath.Join(home, name))
		if err != nil {
			continue
		}
		if err := os.WriteFile(filepath.Join(dst, name), raw, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dst
}

// copyRepo makes a checkout with the same origin (so the same anchors).
func copyRepo(b *testing.B, src, dst string) {
	cmd := exec.Command("cp", "-a", src, dst)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("copy %s: %v\n%s", src, err, out)
	}
}
