package mailbox_test

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/palacehq/palace/mailbox"
)

func FuzzParseLine(f *testing.F) {
	f.Add([]byte(okLine))
	f.Add([]byte(letter("x", `"answers":["0123456789ab"],"external":"JIRA-1","kind":"triage"`)))
	f.Add([]byte(`{"ts":"2025-06-01T12:00:00Z","agent":"\u0061","class":{"a":[1,"]"]},"what":null}`))
	f.Add([]byte("\xef\xbb\xbf{\"a\":\"\xff\"}\r\n"))
	f.Add([]byte(`{"ts":"2025-06-01T12:00:00Z","agent":"a","class":"c","what":"w","repo":"(research task, no repo)","external":false,"answers":[]}`))
	f.Add([]byte(`{"ts":"2025-06-01T12:00:00Z","agent":"a","class":"c","what":"\ud800\u0000","repo":"ALL","external":"JIRA-1"}` + "\r\n"))
	f.Add([]byte(`{"ts":"2025-06-01T12:00:00Z","agent":"a","class":"c","what":"w","repo":"~/src/a (worktree x) (note)","tool":"","kind":"receipt","answers":["0123456789ab"]}`))
	f.Add([]byte(`{"ts":"2025-06-01T12:00:00Z","agent":"a","class":"c","what":"w","what":"dup"}`))
	f.Add([]byte(`{"ts":"2025-06-01T12:00:00Z","agent":"a","class":"c","what":"w"`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		l, err := mailbox.ParseLine(raw)
		if err != nil {
			if le, ok := err.(*mailbox.LetterError); !ok || le.Code == "" || le.Col < 0 {
				t.Fatalf("bad error %T %v", err, err)
			}
			return
		}
		if err := l.Validate(); err != nil {
			t.Fatalf("parsed letter does not validate: %v", err)
		}
		// What palace writes back (distribute copies bytes, but file
		// re-renders) must read as the same letter.
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(l); err != nil {
			t.Fatalf("parsed letter does not marshal: %v", err)
		}
		again, err := mailbox.ParseLine(buf.Bytes())
		if err != nil {
			t.Fatalf("re-rendered letter %s does not parse: %v", buf.Bytes(), err)
		}
		if len(l.Answers) == 0 {
			l.Answers = nil // [] is omitted when rendered
		}
		if !reflect.DeepEqual(again, l) {
			t.Fatalf("round trip changed the letter:\n%+v\n%+v", l, again)
		}
		// The id and the letter do not depend on the line ending.
		crlf := append(bytes.Clone(bytes.TrimSuffix(bytes.TrimSuffix(raw, []byte("\n")), []byte("\r"))), '\r', '\n')
		if mailbox.ID(crlf) != mailbox.ID(raw) {
			t.Fatalf("id changes with the line ending")
		}
		// Routing ignores surrounding space and a trailing annotation.
		if no := mailbox.NamesNoProject(l.Repo); no != mailbox.NamesNoProject(" "+l.Repo+" (note) ") {
			t.Fatalf("routing of %q changes with padding", l.Repo)
		}
	})
}

func FuzzCheck(f *testing.F) {
	f.Add([]byte(okLine+"\n"+okLine+"\n<<<<<<< x\n\n"), []byte(okLine+"\n"))
	f.Add([]byte("\xef\xbb\xbf"+letter("a", `"repo":"x"`)+"\r\n{"), []byte{})
	f.Add([]byte(letter("key=AKIAIOSFODNN7EXAMPLE", `"answers":["aaaaaaaaaaaa"]`)), []byte(nil))
	codes := map[string]bool{}
	for _, c := range mailbox.Codes() {
		codes[c.Code] = true
	}
	f.Fuzz(func(t *testing.T, content, base []byte) {
		opts := mailbox.CheckOptions{Base: base, Global: len(base)%2 == 1}
		got := mailbox.Check(context.Background(), "f", content, opts)
		lines := 1
		for _, c := range content {
			if c == '\n' {
				lines++
			}
		}
		for _, f := range got {
			if f.Line < 1 || f.Line > lines || f.Col < 1 || !codes[f.Code] || f.Message == "" {
				t.Fatalf("bad finding %+v (%d lines)", f, lines)
			}
		}
		again := mailbox.Check(context.Background(), "f", content, opts)
		if len(again) != len(got) {
			t.Fatalf("not deterministic: %d then %d findings", len(got), len(again))
		}
	})
}
