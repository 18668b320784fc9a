package mailbox_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/palacehq/palace/mailbox"
)

// letter renders a valid letter line; extra is spliced in as more members.
func letter(what, extra string) string {
	s := `{"ts":"2025-06-01T12:00:00Z","agent":"claude","class":"tool_error","what":"` + what + `"`
	if extra != "" {
		s += "," + extra
	}
	return s + "}"
}

func strs(fs []mailbox.Finding) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.String()
	}
	return out
}

func diff(t *testing.T, got []mailbox.Finding, want []string) {
	t.Helper()
	g := strs(got)
	if strings.Join(g, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(g, "\n"), strings.Join(want, "\n"))
	}
}

func TestCheckLineFindings(t *testing.T) {
	a := letter("first", "")
	lines := []string{
		a,
		`{"ts":x}`,
		`{"ts":"2025-06-01T12:00:00Z","class":"c","what":"w"}`,
		letter("leaked", `"snippet":"export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE"`),
		"<<<<<<< HEAD",
		"=======",
		">>>>>>> other",
		a,
		letter("reply", `"answers":["0123456789ab"]`),
		"",
		"{\"ts\":\"\xff\"}",
		letter("new field", `"mood":"fine"`),
	}
	content := strings.Join(lines, "\n") + "\n"
	got := mailbox.Check(context.Background(), ".palace/inbox.jsonl", []byte(content), mailbox.CheckOptions{})
	p := ".palace/inbox.jsonl"
	diff(t, got, []string{
		p + `:2:7: PM001 invalid JSON: invalid character 'x' looking for beginning of value`,
		p + `:3:1: PM002 missing required field "agent"`,
		p + `:4:120: PM003 secret (aws-access-key-id): AKIA************MPLE; remove it, or mark a deliberate fixture with palace:allow-secret`,
		p + `:5:1: PM004 merge conflict marker; resolve the conflict by keeping both sides' letters (` + "`.palace/inbox.jsonl merge=union`" + ` in .gitattributes avoids these)`,
		p + `:6:1: PM004 merge conflict marker; resolve the conflict by keeping both sides' letters (` + "`.palace/inbox.jsonl merge=union`" + ` in .gitattributes avoids these)`,
		p + `:7:1: PM004 merge conflict marker; resolve the conflict by keeping both sides' letters (` + "`.palace/inbox.jsonl merge=union`" + ` in .gitattributes avoids these)`,
		p + `:8:1: PM005 duplicate of line 1 (letter ` + mailbox.ID([]byte(a)) + `); each letter appears once in a box`,
		p + `:9:83: PM007 warning: "answers[0]" names letter 0123456789ab, which is not in this box`,
		p + `:10:1: PM014 warning: blank line; a box holds one letter per line`,
		p + `:11:8: PM009 invalid UTF-8 at byte 8; letters are UTF-8 JSON`,
		p + `:12:87: PM013 warning: unknown field "mood" (ignored)`,
	})
	if !mailbox.HasErrors(got) {
		t.Error("HasErrors = false")
	}
	for _, f := range got {
		if f.Code == "PM003" && (f.Rule != "aws-access-key-id" || f.EndCol != f.Col+20) {
			t.Errorf("secret finding %+v: want rule and end_col", f)
		}
	}
}

func TestCheckWarningsOnly(t *testing.T) {
	reply := letter("reply", `"answers":["0123456789ab"]`)
	got := mailbox.Check(context.Background(), "b", []byte(reply+"\n"), mailbox.CheckOptions{})
	if len(got) != 1 || got[0].Severity != mailbox.SeverityWarning || mailbox.HasErrors(got) {
		t.Fatalf("got %v, want one warning", strs(got))
	}
	known := func(id string) bool { return id == "0123456789ab" }
	if got := mailbox.Check(context.Background(), "b", []byte(reply+"\n"), mailbox.CheckOptions{KnownIDs: known}); len(got) != 0 {
		t.Errorf("with KnownIDs: %v, want none", strs(got))
	}
}

func TestCheckEncodings(t *testing.T) {
	a, b := letter("a", ""), letter("b", "")
	tests := []struct {
		name    string
		content string
		want    []string
	}{
		{"empty file", "", nil},
		{"only newline", "\n", []string{"x:1:1: PM014 warning: blank line; a box holds one letter per line"}},
		{"bom", "\ufeff" + a + "\n", []string{"x:1:1: PM011 warning: byte-order mark at start of file; boxes are plain UTF-8 (the mark is ignored)"}},
		{"bom with error column shifted", "\ufeff{\"ts\":x}\n", []string{
			"x:1:1: PM011 warning: byte-order mark at start of file; boxes are plain UTF-8 (the mark is ignored)",
			"x:1:10: PM001 invalid JSON: invalid character 'x' looking for beginning of value"}},
		{"crlf", a + "\r\n" + b + "\r\n", []string{fmt.Sprintf("x:1:%d: PM012 warning: line ends with CRLF (2 such lines in this file); boxes use LF (the \\r is ignored, ids are unchanged)", len(a)+1)}},
		{"no final newline", a + "\n" + b, []string{fmt.Sprintf("x:2:%d: PM015 warning: no newline at end of file (palace adds one before appending)", len(b)+1)}},
		{"long line", a + "\n" + `{"what":"` + strings.Repeat("a", mailbox.MaxLineBytes) + `"}` + "\n", []string{
			fmt.Sprintf("x:2:65537: PM010 line is %d bytes, over the 65536-byte limit; a letter is a report, not an attachment", mailbox.MaxLineBytes+11)}},
		{"nul bytes", "\x00\x00\n", []string{"x:1:1: PM001 invalid JSON: invalid character '\\x00' looking for beginning of value"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			diff(t, mailbox.Check(context.Background(), "x", []byte(tt.content), mailbox.CheckOptions{}), tt.want)
		})
	}
}

// A 10 MB single line (a pasted log) is one finding, found in bounded time.
func TestCheckTenMegabyteLine(t *testing.T) {
	big := append([]byte(`{"ts":"2025-06-01T12:00:00Z","agent":"a","class":"c","what":"`), bytes.Repeat([]byte("log line token=abc "), (10<<20)/19)...)
	big = append(big, "\"}\n"...)
	got := mailbox.Check(context.Background(), "x", big, mailbox.CheckOptions{})
	if len(got) != 1 || got[0].Code != mailbox.CodeLongLine || got[0].Line != 1 {
		t.Fatalf("got %v", strs(got))
	}
}

func TestCheckGlobalBox(t *testing.T) {
	content := letter("project", `"repo":"/src/palace"`) + "\n" + letter("none", "") + "\n"
	got := mailbox.Check(context.Background(), "inbox.jsonl", []byte(content), mailbox.CheckOptions{Global: true})
	diff(t, got, []string{`inbox.jsonl:1:85: PM008 letter names project "/src/palace" but sits in the global box; project letters belong in that repository's box (palace mailbox distribute files them)`})
	if got := mailbox.Check(context.Background(), "inbox.jsonl", []byte(content), mailbox.CheckOptions{}); len(got) != 0 {
		t.Errorf("repo box: %v", strs(got))
	}
}

func TestCheckHistory(t *testing.T) {
	a, b, c, d := letter("a", ""), letter("b", ""), letter("c", ""), letter("d", "")
	id := func(s string) string { return mailbox.ID([]byte(s)) }
	base := a + "\n" + b + "\n" + c + "\n"
	tests := []struct {
		name, staged string
		want         []string
	}{
		{"append is fine", base + d + "\n", nil},
		{"unchanged", base, nil},
		{"crlf conversion keeps history", strings.ReplaceAll(base, "\n", "\r\n"), []string{
			fmt.Sprintf("x:1:%d: PM012 warning: line ends with CRLF (3 such lines in this file); boxes use LF (the \\r is ignored, ids are unchanged)", len(a)+1)}},
		{"bom keeps history", "\ufeff" + base, []string{"x:1:1: PM011 warning: byte-order mark at start of file; boxes are plain UTF-8 (the mark is ignored)"}},
		{"rewritten line", a + "\n" + d + "\n" + c + "\n", []string{
			"x:2:1: PM006 line 2 rewrites committed history: letter " + id(b) + " was replaced by " + id(d) + "; boxes are append-only: restore the line and add a new letter at the end"}},
		{"deleted middle line", a + "\n" + c + "\n", []string{
			"x:2:1: PM006 committed line 2 (letter " + id(b) + ") was deleted; boxes are append-only: restore it",
			"x:2:1: PM006 committed line 3 (letter " + id(c) + ") moved to line 2; boxes are append-only: add new letters at the end"}},
		{"truncated", a + "\n", []string{
			"x:1:1: PM006 committed line 2 (letter " + id(b) + ") was deleted; boxes are append-only: restore it",
			"x:1:1: PM006 committed line 3 (letter " + id(c) + ") was deleted; boxes are append-only: restore it"}},
		{"emptied", "", []string{
			"x:1:1: PM006 committed line 1 (letter " + id(a) + ") was deleted; boxes are append-only: restore it",
			"x:1:1: PM006 committed line 2 (letter " + id(b) + ") was deleted; boxes are append-only: restore it",
			"x:1:1: PM006 committed line 3 (letter " + id(c) + ") was deleted; boxes are append-only: restore it"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mailbox.Check(context.Background(), "x", []byte(tt.staged), mailbox.CheckOptions{Base: []byte(base)})
			diff(t, got, tt.want)
		})
	}
	// A base without a final newline: its last line may only gain one.
	noNL := a + "\n" + b
	for staged, want := range map[string][]string{
		noNL + "\n" + d + "\n": nil,
		noNL + ` ` + "\n": {"x:2:1: PM006 line 2 rewrites committed history: letter " + id(b) + " was replaced by " + id(b+` `) +
			"; boxes are append-only: restore the line and add a new letter at the end"},
	} {
		diff(t, mailbox.Check(context.Background(), "x", []byte(staged), mailbox.CheckOptions{Base: []byte(noNL)}), want)
	}
	// A truncated 1000-line box: capped, with a summary.
	var big strings.Builder
	for i := range 1000 {
		big.WriteString(letter(fmt.Sprint(i), "") + "\n")
	}
	got := mailbox.Check(context.Background(), "x", nil, mailbox.CheckOptions{Base: []byte(big.String())})
	if len(got) != 51 || got[50].Message != "… and 950 more changes to committed lines" {
		t.Errorf("truncated box: %d findings, last %q", len(got), got[len(got)-1].Message)
	}
}

type denyFunc func(context.Context, mailbox.DenyInput) ([]string, error)

func (f denyFunc) Deny(ctx context.Context, in mailbox.DenyInput) ([]string, error) {
	return f(ctx, in)
}

type batchDeny struct {
	denyFunc
	calls int
}

func (b *batchDeny) DenyBatch(ctx context.Context, in []mailbox.DenyInput) ([][]string, error) {
	b.calls++
	out := make([][]string, len(in))
	for i, x := range in {
		out[i], _ = b.denyFunc(ctx, x)
	}
	return out, nil
}

var (
	_ mailbox.DenyRules      = denyFunc(nil)
	_ mailbox.BatchDenyRules = (*batchDeny)(nil)
)

func TestCheckDenyRules(t *testing.T) {
	content := letter("ok", "") + "\n" + letter("no agent field", `"class":"x"`) + "\n" + letter("bad words", `"tool":"rm -rf"`) + "\n"
	var seen []mailbox.DenyInput
	rules := denyFunc(func(_ context.Context, in mailbox.DenyInput) ([]string, error) {
		seen = append(seen, in)
		if in.Letter.Tool == "rm -rf" {
			return []string{"letters must not quote destructive commands", "PM120: tool field names a forbidden command"}, nil
		}
		return nil, nil
	})
	got := mailbox.Check(context.Background(), "b", []byte(content), mailbox.CheckOptions{Deny: rules})
	diff(t, got, []string{
		`b:2:92: PM002 duplicate field "class"`,
		`b:3:1: PM100 letters must not quote destructive commands`,
		`b:3:1: PM120 tool field names a forbidden command`,
	})
	if len(seen) != 2 || seen[1].Line != 3 || seen[1].Box != "project" || seen[1].Path != "b" || seen[1].ID != mailbox.ID([]byte(letter("bad words", `"tool":"rm -rf"`))) {
		t.Errorf("deny inputs = %+v (invalid letters must not reach the policy)", seen)
	}

	bd := &batchDeny{denyFunc: rules}
	if got2 := mailbox.Check(context.Background(), "b", []byte(content), mailbox.CheckOptions{Deny: bd}); strings.Join(strs(got2), "\n") != strings.Join(strs(got), "\n") || bd.calls != 1 {
		t.Errorf("batch: %d calls, findings %v", bd.calls, strs(got2))
	}

	failing := denyFunc(func(context.Context, mailbox.DenyInput) ([]string, error) {
		return nil, errors.New("rego: eval_conflict_error")
	})
	got = mailbox.Check(context.Background(), "b", []byte(letter("x", "")+"\n"), mailbox.CheckOptions{Deny: failing})
	diff(t, got, []string{"b:1:1: PM101 palace.mailbox policy failed: rego: eval_conflict_error; the letter is refused until the policy evaluates (fail closed)"})

	var many strings.Builder
	for i := range 25 {
		many.WriteString(letter(fmt.Sprint(i), "") + "\n")
	}
	calls := 0
	counting := denyFunc(func(context.Context, mailbox.DenyInput) ([]string, error) { calls++; return nil, errors.New("timeout") })
	got = mailbox.Check(context.Background(), "b", []byte(many.String()), mailbox.CheckOptions{Deny: counting})
	if calls != 10 || len(got) != 11 || !strings.Contains(got[10].Message, "for this and 14 more letters") {
		t.Errorf("failing policy: %d calls, %d findings, last %q", calls, len(got), got[len(got)-1].Message)
	}
}

// Check must be deterministic whatever the chunking: a box big enough to be
// split across goroutines gives the same findings as line-by-line checks.
func TestCheckParallelDeterministic(t *testing.T) {
	var b strings.Builder
	var want []string
	for i := 0; b.Len() < 3<<20; i++ {
		line := letter(fmt.Sprint("report ", i), "")
		if i%5000 == 17 {
			line = fmt.Sprintf(`{"n":%d,`, i)
			want = append(want, fmt.Sprintf("big:%d:%d: PM001 invalid JSON: unexpected end of JSON input", i+1, len(line)+1))
		}
		b.WriteString(line + "\n")
	}
	for range 3 {
		diff(t, mailbox.Check(context.Background(), "big", []byte(b.String()), mailbox.CheckOptions{}), want)
	}
}

func TestCodesTable(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range mailbox.Codes() {
		if seen[c.Code] || c.Summary == "" || (c.Severity != mailbox.SeverityError && c.Severity != mailbox.SeverityWarning) {
			t.Errorf("bad code entry %+v", c)
		}
		seen[c.Code] = true
	}
	if len(seen) != 17 {
		t.Errorf("%d codes", len(seen))
	}
}

// batchFunc is a BatchDenyRules whose whole answer is given.
type batchFunc func([]mailbox.DenyInput) ([][]string, error)

func (f batchFunc) Deny(context.Context, mailbox.DenyInput) ([]string, error) {
	return nil, errors.New("Deny must not be called when DenyBatch exists")
}

func (f batchFunc) DenyBatch(_ context.Context, in []mailbox.DenyInput) ([][]string, error) {
	return f(in)
}

var _ mailbox.BatchDenyRules = batchFunc(nil)

func TestCheckDenyBatchFailures(t *testing.T) {
	var box strings.Builder
	for i := range 25 {
		box.WriteString(letter(fmt.Sprint(i), "") + "\n")
	}
	check := func(rules mailbox.DenyRules) []mailbox.Finding {
		return mailbox.Check(context.Background(), "b", []byte(box.String()), mailbox.CheckOptions{Deny: rules})
	}

	// One letter the policy cannot decide is refused alone.
	partial := batchFunc(func(in []mailbox.DenyInput) ([][]string, error) {
		out, errs := make([][]string, len(in)), make([]error, len(in))
		errs[3] = errors.New("deadline of 100ms exceeded")
		out[7] = []string{"PM130: no agent-7 letters"}
		return out, &mailbox.BatchError{Errs: errs}
	})
	diff(t, check(partial), []string{
		"b:4:1: PM101 palace.mailbox policy failed: deadline of 100ms exceeded; the letter is refused until the policy evaluates (fail closed)",
		"b:8:1: PM130 no agent-7 letters",
	})

	// A whole-batch error refuses every letter, in ten findings and a summary.
	broken := batchFunc(func([]mailbox.DenyInput) ([][]string, error) { return nil, errors.New("policy set failed to compile") })
	got := check(broken)
	if len(got) != 11 || got[9].Line != 10 || got[10].Line != 11 ||
		got[10].Message != "palace.mailbox policy failed for this and 14 more letters: policy set failed to compile; they are refused until the policy evaluates (fail closed)" {
		t.Errorf("broken batch: %d findings:\n%s", len(got), strings.Join(strs(got), "\n"))
	}
	if mailbox.HasErrors(got) != true {
		t.Error("a refused batch must fail the check")
	}

	// A BatchError of the wrong length cannot say which letters failed: all are refused.
	short := batchFunc(func(in []mailbox.DenyInput) ([][]string, error) {
		return make([][]string, len(in)), &mailbox.BatchError{Errs: make([]error, 2)}
	})
	if got := check(short); len(got) != 11 || got[0].Message != "palace.mailbox policy failed: policy returned 25 results and 2 errors for 25 letters; the letter is refused until the policy evaluates (fail closed)" {
		t.Errorf("short BatchError: %v", strs(got))
	}
}
