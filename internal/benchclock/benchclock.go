// Package benchclock measures the process CPU time benchmarks report beside
// wall time: on a shared machine wall time includes waiting for a core, CPU
// time does not. It owns that measurement only; benchmarks keep their own
// figures and names.
package benchclock

import (
	"syscall"
	"testing"
	"time"
)

// CPU adds up the process's CPU time (user + system, every thread) over
// the timed parts of a benchmark.
type CPU struct {
	start, total time.Duration
}

// Now is the process's CPU time so far (0 if the system will not say).
func Now() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Start and Stop bracket a timed part.
func (c *CPU) Start() { c.start = Now() }
func (c *CPU) Stop()  { c.total += Now() - c.start }

// Report adds cpu-ms/op over n operations to the benchmark's output.
func (c *CPU) Report(b *testing.B, n int) {
	if n > 0 {
		b.ReportMetric(float64(c.total.Milliseconds())/float64(n), "cpu-ms/op")
	}
}
