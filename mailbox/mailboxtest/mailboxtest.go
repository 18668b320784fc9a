// Package mailboxtest builds mailbox fixtures; only _test files import it.
package mailboxtest

import (
	"bytes"
	"fmt"

	"github.com/palacehq/palace/mailbox"
)

// Box returns a clean box of n letters of about 300 bytes whose prose wakes
// the secret scanner's keyword prefilter without a finding; every tenth
// letter is a triage answering an earlier one.
func Box(n int) []byte {
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
