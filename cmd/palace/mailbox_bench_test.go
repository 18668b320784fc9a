package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/palacehq/palace/mailbox/mailboxtest"
)

// benchCheckProcess times `palace mailbox check ARGS` as a new process per
// op — start to exit, what a pre-commit hook pays — and reports p50/p99.
// A run with findings fails the benchmark: the box must be clean.
func benchCheckProcess(b *testing.B, e *env, args ...string) {
	b.Helper()
	var lat []time.Duration
	for b.Loop() {
		cmd := exec.Command(palaceBin, append([]string{"mailbox", "check"}, args...)...)
		cmd.Dir = e.dir
		cmd.Env = append(filteredEnv(), "PALACE_HOME="+e.home)
		start := time.Now()
		out, err := cmd.CombinedOutput()
		lat = append(lat, time.Since(start))
		if err != nil {
			b.Fatalf("check: %v\n%.2000s", err, out)
		}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

func writeBench(b *testing.B, e *env, rel string, content []byte) {
	b.Helper()
	p := filepath.Join(e.dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(p, content, 0o644); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkMailboxCheckProcess1k: the hook on a 1k-letter box, whole
// process (target ≤ 100 ms).
func BenchmarkMailboxCheckProcess1k(b *testing.B) {
	e := newEnv(b)
	writeBench(b, e, ".palace/inbox.jsonl", mailboxtest.Box(1_000))
	benchCheckProcess(b, e, ".palace/inbox.jsonl")
}

// BenchmarkMailboxCheckProcess100k: a 100k-letter (~30 MB) box, whole
// process (target ≤ 1 s).
func BenchmarkMailboxCheckProcess100k(b *testing.B) {
	e := newEnv(b)
	box := mailboxtest.Box(100_000)
	b.ReportMetric(float64(len(box))/(1<<20), "MiB")
	writeBench(b, e, ".palace/inbox.jsonl", box)
	benchCheckProcess(b, e, ".palace/inbox.jsonl")
}

// BenchmarkMailboxCheckProcessStaged: --staged as the hook runs it — git
// reads the index and HEAD blobs, and the history check compares them. HEAD
// holds n-1000 letters, the index n.
func BenchmarkMailboxCheckProcessStaged1k(b *testing.B)   { benchStaged(b, 1_000) }
func BenchmarkMailboxCheckProcessStaged100k(b *testing.B) { benchStaged(b, 100_000) }

func benchStaged(b *testing.B, n int) {
	e := newEnv(b)
	box := mailboxtest.Box(n)
	cut := 0
	if n > 1_000 {
		cut = bytes.LastIndexByte(box[:len(box)-300_000], '\n') + 1
	}
	writeBench(b, e, ".palace/inbox.jsonl", box[:cut])
	e.git("add", "-A")
	e.git("commit", "-q", "-m", "box")
	writeBench(b, e, ".palace/inbox.jsonl", box)
	e.git("add", "-A")
	benchCheckProcess(b, e, "--staged")
}

// mailboxTeamPolicy is a realistic team rule set: every letter is evaluated.
const mailboxTeamPolicy = `package palace.mailbox

import rego.v1

deny contains "PM120: tool_error letters must name the tool" if {
	input.letter.class == "tool_error"
	not input.letter.tool
	not input.letter.kind
}

deny contains "PM121: letters in the global box name no project" if {
	input.box == "global"
	input.letter.repo
}
`

// BenchmarkMailboxCheckProcessTeamPolicy: with a team palace.mailbox
// policy the process compiles the policy set and evaluates every letter
// (one OPA evaluation per letter, in parallel).
func BenchmarkMailboxCheckProcessTeamPolicy1k(b *testing.B)   { benchTeam(b, 1_000) }
func BenchmarkMailboxCheckProcessTeamPolicy100k(b *testing.B) { benchTeam(b, 100_000) }

func benchTeam(b *testing.B, n int) {
	e := newEnv(b)
	writeBench(b, e, ".palace/policies/mailbox.rego", []byte(mailboxTeamPolicy))
	writeBench(b, e, ".palace/inbox.jsonl", mailboxtest.Box(n))
	benchCheckProcess(b, e, ".palace/inbox.jsonl")
}
