package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.lsp.dev/jsonrpc2"
)

// frameStream is the raw-frame side of the jsonrpc2 header stream (the
// library's connection uses it when a stream has it).
type frameStream interface {
	ReadFrame(ctx context.Context) ([]byte, int64, error)
	WriteFrame(ctx context.Context, data []byte) (int64, error)
}

// tolerantStream answers a frame that is not JSON, or not a JSON-RPC message,
// with a parse (-32700) or invalid-request (-32600) error carrying a null
// id, and reads on. jsonrpc2 v1 would otherwise end the connection on the
// first malformed frame: one bad byte from an editor must not kill the
// server. A frame over the size limit is skipped and answered the same way
// (-32600). Framing errors (a bad Content-Length header) still end it,
// since after one the stream cannot find the next message.
type tolerantStream struct {
	jsonrpc2.Stream
	frames frameStream
	// onBad is told about each rejected frame (for the log).
	onBad func(err error)
}

var _ frameStream = (*tolerantStream)(nil)

func newTolerantStream(inner jsonrpc2.Stream, onBad func(error)) (*tolerantStream, error) {
	fs, ok := inner.(frameStream)
	if !ok {
		return nil, errors.New("lsp: the jsonrpc2 stream has no raw frame access")
	}
	return &tolerantStream{Stream: inner, frames: fs, onBad: onBad}, nil
}

// ReadFrame returns the next well-formed frame, answering malformed ones.
func (s *tolerantStream) ReadFrame(ctx context.Context) ([]byte, int64, error) {
	for {
		frame, n, err := s.frames.ReadFrame(ctx)
		var tooLarge *frameTooLargeError
		var werr *jsonrpc2.Error
		switch {
		case errors.As(err, &tooLarge):
			// Its body was skipped, so the stream is still in step.
			werr = jsonrpc2.NewError(jsonrpc2.InvalidRequest, tooLarge.Error())
		case err != nil:
			return nil, n, err
		default:
			if werr = checkFrame(frame); werr == nil {
				return frame, n, nil
			}
		}
		if s.onBad != nil {
			s.onBad(werr)
		}
		resp, merr := json.Marshal(struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      *int            `json:"id"`
			Error   *jsonrpc2.Error `json:"error"`
		}{"2.0", nil, werr})
		if merr != nil {
			return nil, 0, fmt.Errorf("lsp: encode parse error: %w", merr)
		}
		if _, err := s.frames.WriteFrame(ctx, resp); err != nil {
			return nil, 0, err
		}
	}
}

// WriteFrame passes through.
func (s *tolerantStream) WriteFrame(ctx context.Context, data []byte) (int64, error) {
	return s.frames.WriteFrame(ctx, data)
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
