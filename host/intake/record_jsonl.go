package intake

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// utf8BOM is the byte order mark some Windows editors write at the start of
// a UTF-8 file; it is not part of the first line's JSON.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// readRecordLines passes each RecordRequest line of r to fn with its line
// number, skipping blanks and a leading BOM, defaults filling omissions. The
// first error stops it; a line over MaxJSONLLineBytes is refused unread.
func readRecordLines(r io.Reader, name string, defaults RecordRequest, fn func(lineNo int, req RecordRequest) error) error {
	br := bufio.NewReaderSize(r, 1<<16)
	for lineNo := 1; ; lineNo++ {
		line, tooLong, err := readLine(br, MaxJSONLLineBytes)
		if tooLong {
			return invalid("jsonl", "%s:%d: line is over %d MiB: one line holds one piece of evidence of at most 1 MiB", name, lineNo, MaxJSONLLineBytes>>20)
		}
		if lineNo == 1 {
			line = bytes.TrimPrefix(line, utf8BOM)
		}
		if trimmed := bytes.TrimSpace(line); len(trimmed) > 0 {
			if !utf8.Valid(trimmed) {
				return invalid("jsonl", "%s:%d: line is not valid UTF-8: re-encode the file as UTF-8", name, lineNo)
			}
			req, perr := decodeRecordLine(trimmed, defaults)
			if perr != nil {
				return invalid("jsonl", "%s:%d: %v: each line must be one JSON object like {\"content\": \"…\", \"field\": \"…\"}", name, lineNo, perr)
			}
			if ferr := fn(lineNo, req); ferr != nil {
				return ferr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			var he *Error
			if errors.As(err, &he) {
				return err // the input's own size limit, already named
			}
			return invalid("jsonl", "read %s: %v", name, err)
		}
	}
}

// readLine reads one line of at most limit bytes (its newline included). A
// longer line is reported as tooLong as soon as it passes the limit.
func readLine(br *bufio.Reader, limit int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > limit {
			return nil, true, err
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, false, err
	}
}

func decodeRecordLine(line []byte, defaults RecordRequest) (RecordRequest, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	req := defaults
	req.Content, req.Tags = "", nil
	if err := dec.Decode(&req); err != nil {
		return RecordRequest{}, fmt.Errorf("invalid JSON: %v", strings.TrimPrefix(err.Error(), "json: "))
	}
	if dec.More() {
		return RecordRequest{}, errors.New("more than one JSON value on the line")
	}
	if req.Tags == nil {
		req.Tags = defaults.Tags
	}
	return req, nil
}
