package host_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/intake"
	"github.com/palacehq/palace/internal/benchclock"
)

// BenchmarkRecordBatch imports 10,000 JSONL evidence rows per op into a real
// SQLite file and reports rows/s (target ≥ 20,000).
func BenchmarkRecordBatch(b *testing.B) {
	const rows = 10_000
	// Each op imports new content: the same content is recorded once.
	batch := func(op int) []byte {
		var in bytes.Buffer
		for i := range rows {
			fmt.Fprintf(&in, "{\"content\":\"op %d row %d: the importer saw WAL checkpoints stall under load; see logs\",\"field\":\"storage\",\"source_ref\":\"log:%d\",\"tags\":[\"bench\"]}\n", op, i, i)
		}
		return in.Bytes()
	}
	data := batch(0)
	ctx := context.Background()
	h, err := host.Open(ctx, host.Options{Home: filepath.Join(b.TempDir(), "home"), Cwd: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	var cpu benchclock.CPU
	op := 0
	cpu.Start()
	for b.Loop() {
		op++
		res, err := h.Intake().RecordBatch(ctx, bytes.NewReader(batch(op)), "bench.jsonl", intake.RecordRequest{Anchor: "global"}, nil)
		if err != nil || res.Imported != rows {
			b.Fatalf("imported %d: %v", res.Imported, err)
		}
	}
	cpu.Stop()
	cpu.Report(b, op)
	b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
}
