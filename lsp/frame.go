package lsp

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"

	"go.lsp.dev/jsonrpc2"
)

// Limits of the LSP framing palace reads. jsonrpc2's header stream
// allocates a body of whatever Content-Length says (up to 1 GiB) and reads
// header lines of any length, so a client (or anything writing to the
// server's stdin) could make the server allocate a gigabyte per message.
const (
	// maxFrameBytes bounds one message body: far above any request palace
	// serves (a didOpen of a large source file is a few MiB).
	maxFrameBytes = 64 << 20
	// maxHeaderLineBytes and maxHeaderBytes bound a frame's header block.
	maxHeaderLineBytes = 4 << 10
	maxHeaderBytes     = 64 << 10
)

// frameTooLargeError is a frame whose body was skipped because it exceeds
// maxFrameBytes; the stream stays in step and reads on.
type frameTooLargeError struct{ size int64 }

func (e *frameTooLargeError) Error() string {
	return fmt.Sprintf("message of %d bytes exceeds the limit of %d bytes (64 MiB): send smaller messages", e.size, maxFrameBytes)
}

// cappedStream is the LSP header framing with bounded reads: it parses the
// header block itself and reads a body only within maxFrameBytes, skipping
// (never buffering) an oversized one. Writes go through jsonrpc2's header
// stream, whose reading side is never used.
type cappedStream struct {
	jsonrpc2.Stream
	frames frameStream
	in     *bufio.Reader
	rbuf   []byte
}

var _ frameStream = (*cappedStream)(nil)

func newCappedStream(rwc io.ReadWriteCloser) (*cappedStream, error) {
	inner := jsonrpc2.NewHeaderStream(rwc)
	fs, ok := inner.(frameStream)
	if !ok {
		return nil, fmt.Errorf("lsp: the jsonrpc2 stream has no raw frame access")
	}
	return &cappedStream{Stream: inner, frames: fs, in: bufio.NewReaderSize(rwc, maxHeaderLineBytes)}, nil
}

// Read decodes the next message.
func (s *cappedStream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	body, n, err := s.ReadFrame(ctx)
	if err != nil {
		return nil, 0, err
	}
	msg, err := jsonrpc2.DecodeMessage(body)
	if err != nil {
		return nil, 0, err
	}
	return msg, n, nil
}

// ReadFrame returns the next frame's body (valid until the next read). An
// oversized body is skipped and reported as *frameTooLargeError; a
// malformed header block is jsonrpc2.ErrInvalidHeader (the stream cannot
// find the next frame after one).
func (s *cappedStream) ReadFrame(ctx context.Context) ([]byte, int64, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	length, headerLen, err := s.readHeader()
	if err != nil {
		return nil, 0, err
	}
	if length > maxFrameBytes {
		skipped, err := io.CopyN(io.Discard, s.in, length)
		if err != nil {
			return nil, 0, io.ErrUnexpectedEOF
		}
		return nil, int64(headerLen) + skipped, &frameTooLargeError{size: length}
	}
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
	return body, int64(headerLen) + length, nil
}

// WriteFrame passes through.
func (s *cappedStream) WriteFrame(ctx context.Context, data []byte) (int64, error) {
	return s.frames.WriteFrame(ctx, data)
}

// readHeader reads one header block: lines up to a blank one, with a
// Content-Length (case-insensitive name; CRLF or LF line ends; other
// fields ignored), as jsonrpc2 reads it but within the header limits.
func (s *cappedStream) readHeader() (length int64, consumed int, err error) {
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
