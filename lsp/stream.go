package lsp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"go.lsp.dev/jsonrpc2"
)

// Limits of the LSP framing palace reads: jsonrpc2's own header stream
// allocates whatever Content-Length says (up to 1 GiB). maxFrameBytes is
// far above any request palace serves (a didOpen of a large source file is
// a few MiB).
const (
	maxFrameBytes      = 64 << 20
	maxHeaderLineBytes = 4 << 10
	maxHeaderBytes     = 64 << 10
)

// stream is the LSP header framing with bounded reads: an oversized body
// is skipped, never buffered. A frame over the limit, not JSON, or not a
// JSON-RPC message is answered with an invalid-request (-32600) or parse
// (-32700) error with a null id and the stream reads on, where jsonrpc2
// would end the connection: one bad byte from an editor must not kill the
// server. A bad header block still ends it (the next frame cannot be
// found). Writes go through jsonrpc2's header stream.
type stream struct {
	jsonrpc2.Stream
	out  frameWriter
	in   *bufio.Reader
	rbuf []byte
	// onBad is told about each rejected frame (for the log).
	onBad func(err error)
}

type frameWriter interface {
	WriteFrame(ctx context.Context, data []byte) (int64, error)
}

func newStream(rwc io.ReadWriteCloser, onBad func(error)) (*stream, error) {
	inner := jsonrpc2.NewHeaderStream(rwc)
	out, ok := inner.(frameWriter)
	if !ok {
		return nil, errors.New("lsp: the jsonrpc2 stream has no raw frame access")
	}
	return &stream{Stream: inner, out: out, in: bufio.NewReaderSize(rwc, maxHeaderLineBytes), onBad: onBad}, nil
}

// Read decodes the next well-formed message.
func (s *stream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	body, n, err := s.ReadFrame(ctx)
	if err != nil {
		return nil, 0, err
	}
	msg, err := jsonrpc2.DecodeMessage(body)
	return msg, n, err
}

// WriteFrame passes through.
func (s *stream) WriteFrame(ctx context.Context, data []byte) (int64, error) {
	return s.out.WriteFrame(ctx, data)
}

// ReadFrame returns the next well-formed frame's body (valid until the next
// read), answering the malformed ones before it.
func (s *stream) ReadFrame(ctx context.Context) ([]byte, int64, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		length, headerLen, err := s.readHeader()
		if err != nil {
			return nil, 0, err
		}
		var bad *jsonrpc2.Error
		if length > maxFrameBytes {
			// Skipped, so the stream is still in step.
			if _, err := io.CopyN(io.Discard, s.in, length); err != nil {
				return nil, 0, io.ErrUnexpectedEOF
			}
			bad = jsonrpc2.Errorf(jsonrpc2.InvalidRequest, "message of %d bytes exceeds the limit of %d bytes (64 MiB): send smaller messages", length, maxFrameBytes)
		} else {
			if int64(cap(s.rbuf)) < length {
				s.rbuf = make([]byte, length)
			}
			body := s.rbuf[:length]
			if _, err := io.ReadFull(s.in, body); err != nil {
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return nil, 0, err
			}
			if bad = checkFrame(body); bad == nil {
				return body, int64(headerLen) + length, nil
			}
		}
		s.onBad(bad)
		resp, err := json.Marshal(struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      *int            `json:"id"`
			Error   *jsonrpc2.Error `json:"error"`
		}{"2.0", nil, bad})
		if err != nil {
			return nil, 0, fmt.Errorf("lsp: encode parse error: %w", err)
		}
		if _, err := s.out.WriteFrame(ctx, resp); err != nil {
			return nil, 0, err
		}
	}
}

// readHeader reads one header block: lines up to a blank one, with a
// Content-Length (case-insensitive name; CRLF or LF line ends; other
// fields ignored), as jsonrpc2 reads it but within the header limits.
func (s *stream) readHeader() (length int64, consumed int, err error) {
	have := false
	for {
		line, err := s.in.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			return 0, 0, fmt.Errorf("%w: a header line longer than %d bytes", jsonrpc2.ErrInvalidHeader, maxHeaderLineBytes)
		}
		if err != nil {
			if err == io.EOF && (consumed > 0 || len(line) > 0) {
				err = io.ErrUnexpectedEOF
			}
			return 0, 0, err
		}
		consumed += len(line)
		if consumed > maxHeaderBytes {
			return 0, 0, fmt.Errorf("%w: a header block longer than %d bytes", jsonrpc2.ErrInvalidHeader, maxHeaderBytes)
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return 0, 0, fmt.Errorf("%w: a header line without a colon", jsonrpc2.ErrInvalidHeader)
		}
		if !bytes.EqualFold(bytes.TrimSpace(name), []byte("content-length")) {
			continue
		}
		n, perr := strconv.ParseInt(string(bytes.TrimSpace(value)), 10, 64)
		if perr != nil || n <= 0 {
			return 0, 0, fmt.Errorf("%w: Content-Length %q is not a positive number", jsonrpc2.ErrInvalidHeader, bytes.TrimSpace(value))
		}
		length, have = n, true
	}
	if !have {
		return 0, 0, fmt.Errorf("%w: no Content-Length", jsonrpc2.ErrInvalidHeader)
	}
	return length, consumed, nil
}

// checkFrame reports why a frame cannot be dispatched, or nil. A batch array
// must be valid JSON (its members are checked by jsonrpc2 itself); a single
// message must decode as one.
func checkFrame(frame []byte) *jsonrpc2.Error {
	trimmed := bytes.TrimLeft(frame, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if !json.Valid(trimmed) {
			return jsonrpc2.NewError(jsonrpc2.ParseError, "parse error: the frame is not valid JSON")
		}
		return nil
	}
	_, err := jsonrpc2.DecodeMessage(frame)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, jsonrpc2.ErrParse):
		return jsonrpc2.NewError(jsonrpc2.ParseError, "parse error: the frame is not valid JSON")
	default:
		return jsonrpc2.Errorf(jsonrpc2.InvalidRequest, "invalid request: %v", err)
	}
}
