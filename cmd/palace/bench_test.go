package main

import (
	"os/exec"
	"sort"
	"testing"
	"time"
)

// BenchmarkColdGate runs `palace gate ID` as a new process each op: process
// start, opening SQLite, compiling the embedded gate policy, one decision
// (target ≤ 150 ms). p50/p99 are reported as custom metrics.
func BenchmarkColdGate(b *testing.B) {
	e := newEnv(b)
	ev1 := e.record("a fact")
	ev2 := e.record("a check")
	id := e.distill("Cold gate card", "qi", "--supporting", ev1, "--verification", ev2)
	var lat []time.Duration
	b.ResetTimer()
	for b.Loop() {
		cmd := exec.Command(palaceBin, "gate", id)
		cmd.Dir = e.dir
		cmd.Env = append(filteredEnv(), "PALACE_HOME="+e.home)
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("gate: %v\n%s", err, out)
		}
		lat = append(lat, time.Since(start))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
