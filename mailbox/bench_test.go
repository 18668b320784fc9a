package mailbox_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/palacehq/palace/mailbox"
	"github.com/palacehq/palace/mailbox/mailboxtest"
)

func benchCheck(b *testing.B, n int) {
	box := mailboxtest.Box(n)
	if f := mailbox.Check(context.Background(), "box", box, mailbox.CheckOptions{}); len(f) != 0 {
		b.Fatalf("generated box has findings: %v", strs(f[:1]))
	}
	b.SetBytes(int64(len(box)))
	b.ReportMetric(float64(len(box))/(1<<20), "MiB")
	b.ResetTimer()
	for b.Loop() {
		mailbox.Check(context.Background(), "box", box, mailbox.CheckOptions{})
	}
}

func BenchmarkCheck1k(b *testing.B)   { benchCheck(b, 1_000) }
func BenchmarkCheck100k(b *testing.B) { benchCheck(b, 100_000) }

// With history: the box is its committed version plus 1000 new letters.
func BenchmarkCheck100kStaged(b *testing.B) {
	box := mailboxtest.Box(100_000)
	base := box[:bytes.LastIndexByte(box[:len(box)-300_000], '\n')+1]
	b.SetBytes(int64(len(box)))
	for b.Loop() {
		mailbox.Check(context.Background(), "box", box, mailbox.CheckOptions{Base: base})
	}
}

// File: validate, scan, and append under the spool's lock (plus a stat and
// a one-byte read to find an unterminated last line).
func BenchmarkFile(b *testing.B) {
	mb := &mailbox.Mailbox{Home: b.TempDir()}
	l := mailbox.Letter{TS: "2025-06-01T12:00:00Z", Agent: "claude", Class: "tool_error", What: "go test hung on the token prompt", Repo: "~/src/palace"}
	for b.Loop() {
		if _, err := mb.File(context.Background(), l); err != nil {
			b.Fatal(err)
		}
	}
}
