package intake

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzRecordLines feeds arbitrary bytes to the JSON Lines parser of
// `record --jsonl`: it must never panic, every error must be bad input
// (KindInvalid) naming a line, and a UTF-8 byte order mark in front must
// change nothing.
func FuzzRecordLines(f *testing.F) {
	for _, s := range []string{
		"{\"content\":\"a\"}\n\n{\"content\":\"b\",\"tags\":[\"x\"]}\n",
		"\xef\xbb\xbf{\"content\":\"bom\"}\r\n",
		"{\"content\":\"\\u0000\"}\n{\"content\":\"x\"} {}\n",
		"{\"content\":\"x\",\"nope\":1}\n",
		"{\"content\":\"x\",\"field\":\"\\u202e\\u001b[2J\"}\n",
		"[1,2]\n\"s\"\nnull\n",
		"\xff\xfe{}\n",
		"{\"content\":\"x\",\"tags\":null,\"source_ref\":\"a\"}",
	} {
		f.Add([]byte(s))
	}
	parse := func(data []byte) ([]RecordRequest, error) {
		var got []RecordRequest
		err := readRecordLines(bytes.NewReader(data), "fuzz", RecordRequest{Field: "default"}, func(_ int, req RecordRequest) error {
			got = append(got, req)
			return nil
		})
		return got, err
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := parse(data)
		if err != nil {
			var he *Error
			if !errors.As(err, &he) || he.Kind != KindInvalid || he.Field != "jsonl" {
				t.Fatalf("error %v is not bad input naming jsonl", err)
			}
		}
		if bytes.HasPrefix(data, utf8BOM) {
			return
		}
		withBOM, berr := parse(append(append([]byte{}, utf8BOM...), data...))
		if (err == nil) != (berr == nil) || len(got) != len(withBOM) {
			t.Fatalf("a byte order mark changed the result: %d rows (%v) vs %d rows (%v)", len(got), err, len(withBOM), berr)
		}
	})
}
