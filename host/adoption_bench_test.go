package host_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/adoption"
	"github.com/palacehq/palace/host/pack"
	"github.com/palacehq/palace/host/research"
	"github.com/palacehq/palace/internal/benchclock"
)

// BenchmarkAdopt records one checked adoption signal naming a logged
// request, in process, on a palace of 1,000 cards: the card, the request's
// signature and the policy hash are read, and one row written.
func BenchmarkAdopt(b *testing.B) {
	ctx := context.Background()
	e := newCxEnv(b)
	dir := e.repo("app", "https://github.com/acme/app")
	h := e.openClock(dir)
	var ids []string
	for i := range 1000 {
		ids = append(ids, e.card(h, cxCard{statement: fmt.Sprintf("Rule %d: retry SQLite writes after a busy timeout %d", i, i), tier: "shu", field: "storage"}))
	}
	p, err := h.Pack().Context(ctx, pack.ContextRequest{Query: "sqlite busy retry", File: "store/store.go"})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	i := 0
	for b.Loop() {
		res, err := h.Adoption().Adopt(ctx, adoption.Request{Signal: "used", CardID: ids[i%len(ids)], RequestID: p.RequestID, Note: "followed it"})
		if err != nil || !res.Written {
			b.Fatalf("adopt: %+v %v", res, err)
		}
		i++
	}
}

// BenchmarkResearchIngest ingests a new 10,000-finding report per op into
// a real SQLite file (validation, the idempotence read, the policy and the
// batched, FTS5-indexed writes).
func BenchmarkResearchIngest(b *testing.B) {
	const findings = 10_000
	var in bytes.Buffer
	fmt.Fprintf(&in, `{"report_id":"bench-000000","title":"bench","about":"general","sources":[{"id":"s1","url":"https://example.com/wal","title":"WAL"}],"findings":[`)
	for i := range findings {
		if i > 0 {
			in.WriteByte(',')
		}
		fmt.Fprintf(&in, `{"id":"f%d","content":"finding %d: WAL checkpoints stall under load while a reader holds a snapshot","source":"s1","field":"storage"}`, i, i)
	}
	in.WriteString(`]}`)
	data := in.Bytes()
	idAt := bytes.Index(data, []byte("000000"))
	ctx := context.Background()
	h, err := host.Open(ctx, host.Options{Home: filepath.Join(b.TempDir(), "home"), Cwd: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	var cpu benchclock.CPU
	n := 0
	cpu.Start()
	for b.Loop() {
		n++
		copy(data[idAt:], fmt.Sprintf("%06d", n))
		plan, err := h.Research(ctx, research.Request{Report: data, Action: "ingest"})
		if err != nil || plan.Written != findings {
			b.Fatalf("wrote %d: %v", plan.Written, err)
		}
	}
	cpu.Stop()
	cpu.Report(b, n)
	b.ReportMetric(float64(findings*b.N)/b.Elapsed().Seconds(), "rows/s")
}
