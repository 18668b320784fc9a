package secrets_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/palacehq/palace/secrets"
	"github.com/palacehq/palace/secrets/secretstest"
)

// corpus builds ~size bytes of mailbox-like JSON lines: prose that names
// tokens, passwords and keys (so the keyword prefilter fires often), hashes,
// UUIDs, and one real secret every 1000 lines.
func corpus(size int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < size; i++ {
		snippet := fmt.Sprintf("token cache miss; key=%s uuid=%s", secretstest.Gen(uint64(i), secretstest.Hex, 40), "123e4567-e89b-12d3-a456-426614174000")
		if i%1000 == 0 {
			snippet = "api_key: " + secretstest.Gen(uint64(i), secretstest.Alnum, 32)
		}
		fmt.Fprintf(&b, `{"ts":"2025-06-01T12:%02d:%02d.000Z","agent":"claude-%d","class":"tool_error","what":"the password prompt hung after the secret store timed out; retried with a fresh token","repo":"/home/dev/src/project-%d (worktree feature-%d)","tool":"bash","expected":"exit 0 within 5s","snippet":"%s","kind":"report"}`+"\n",
			i/60%60, i%60, i%7, i%13, i%5, snippet)
	}
	return b.Bytes()
}

func BenchmarkScan30MB(b *testing.B) {
	text := corpus(30 << 20)
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for b.Loop() {
		if got := secrets.Scan(text); len(got) == 0 {
			b.Fatal("no findings in corpus")
		}
	}
}

func BenchmarkScanLetter(b *testing.B) {
	text := corpus(300)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		secrets.Scan(text)
	}
}
