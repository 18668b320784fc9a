package mailbox_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/palacehq/palace/host/mailbox"
)

// genBox builds a realistic box of n letters (~300 bytes each): prose that
// mentions tokens and passwords (so the secret prefilter fires), repos with
// worktree annotations, and every tenth letter a triage answering an
// earlier one.
func genBox(n int) []byte {
	var b bytes.Buffer
	ids := make([]string, 0, n)
	for i := range n {
		extra := fmt.Sprintf(`"repo":"~/src/project-%d (worktree feature-%d)","tool":"bash","expected":"the suite passes in under a minute","snippet":"go test ./... -run TestToken%d: exit status 1"`, i%17, i%5, i)
		if i%10 == 9 {
			extra = fmt.Sprintf(`"kind":"triage","answers":["%s"]`, ids[i-5])
		}
		line := fmt.Sprintf(`{"ts":"2025-06-%02dT12:%02d:%02dZ","agent":"agent-%d","class":"tool_error","what":"the password prompt hung after the token refresh; letter %d",%s}`,
			1+i%28, i/60%60, i%60, i%7, i, extra)
		ids = append(ids, mailbox.ID([]byte(line)))
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func benchCheck(b *testing.B, n int) {
	box := genBox(n)
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
	box := genBox(100_000)
	base := box[:bytes.LastIndexByte(box[:len(box)-300_000], '\n')+1]
	b.SetBytes(int64(len(box)))
	for b.Loop() {
		mailbox.Check(context.Background(), "box", box, mailbox.CheckOptions{Base: base})
	}
}
