package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxFrameBytes bounds one inbound JSON-RPC line (16 MiB, the SDK's
// own default). Evidence content is capped at 1 MiB, so a frame this large
// is never a valid palace request.
const DefaultMaxFrameBytes = 16 << 20

// codeServerNotInitialized answers a request sent before initialize: the
// code JSON-RPC servers (LSP first) use for it, in the range JSON-RPC
// reserves for server errors.
const codeServerNotInitialized = -32002

// StdioTransport is newline-delimited JSON-RPC over a reader and a writer,
// the MCP stdio transport. Unlike the SDK's, it survives malformed input:
// the SDK decodes stdin as one JSON stream, so a single line of garbage
// ends the session, while this transport reads line by line and answers a
// line that is not a JSON-RPC message with a JSON-RPC error (-32700 parse
// error, -32600 invalid request) and goes on reading. An over-long line is
// discarded up to its newline and answered the same way.
//
// Batches (JSON arrays) are refused with -32600: MCP removed JSON-RPC
// batching in protocol version 2025-06-18, and every client palace targets
// speaks a later version.
//
// When In ends, every request read before the end is still answered: the
// connection reports the end to the SDK only once it has written the
// answer to each of them (the SDK stops writing when its reader ends), so
// `printf '<initialize>\n<initialized>\n<tools/list>\n' | palace mcp`
// prints both answers. A request the server sends the client after In
// ended (none of palace's tools sends one) is answered at once with an
// error, since no answer can come.
type StdioTransport struct {
	// In is read line by line. Closing the connection closes In when it is an
	// io.Closer, which unblocks a pending read.
	In io.Reader
	// Out receives one JSON-RPC message per line, never anything else.
	Out io.Writer
	// MaxFrameBytes bounds one inbound line. Defaults to DefaultMaxFrameBytes.
	MaxFrameBytes int
}

var _ sdk.Transport = (*StdioTransport)(nil)

// Connect starts reading In and returns the connection.
func (t *StdioTransport) Connect(context.Context) (sdk.Connection, error) {
	limit := t.MaxFrameBytes
	if limit <= 0 {
		limit = DefaultMaxFrameBytes
	}
	c := &lineConn{
		in:       t.In,
		out:      t.Out,
		limit:    limit,
		incoming: make(chan jsonrpc.Message),
		readErr:  make(chan error, 1),
		closed:   make(chan struct{}),
		initIDs:  map[any]bool{},
		owed:     map[any]bool{},
		asked:    map[any]jsonrpc.ID{},
		changed:  make(chan struct{}),
	}
	go c.readLoop()
	return c, nil
}

type lineConn struct {
	in       io.Reader
	limit    int
	incoming chan jsonrpc.Message
	readErr  chan error
	closed   chan struct{}
	once     sync.Once

	// writeMu serializes writes: the SDK writes responses from concurrent
	// handlers, and the read loop writes error responses of its own.
	writeMu sync.Mutex
	out     io.Writer

	// mu guards the session state the transport follows. To give the SDK's
	// uncoded errors a JSON-RPC code: the ids of initialize requests not yet
	// answered, and whether one was answered with success. For what is owed
	// when In ends: the ids of the client's calls given to the SDK and not
	// answered yet, the server's own calls the client has not answered, the
	// answers made up for those once In ended, and changed, closed and
	// replaced on every change of them.
	mu          sync.Mutex
	initIDs     map[any]bool
	initialized bool
	owed        map[any]bool
	asked       map[any]jsonrpc.ID
	ended       bool
	madeUp      []jsonrpc.Message
	changed     chan struct{}
}

var _ sdk.Connection = (*lineConn)(nil)

// readLoop reads frames until In ends or the connection closes. It runs in
// its own goroutine so that Read can return as soon as the connection
// closes, even while In blocks (stdin cannot be interrupted portably).
func (c *lineConn) readLoop() {
	br := bufio.NewReaderSize(c.in, 64<<10)
	for {
		line, tooLong, err := readFrame(br, c.limit)
		if tooLong {
			c.reject(nil, jsonrpc.CodeParseError, fmt.Sprintf("message is over %d bytes: palace reads at most %d bytes per line", c.limit, c.limit))
		} else if line = bytes.TrimSpace(line); len(line) > 0 {
			msg, id, code, reason := decodeFrame(line)
			if msg == nil {
				c.reject(id, code, reason)
			} else {
				c.noteRead(msg)
				select {
				case c.incoming <- msg:
				case <-c.closed:
					return
				}
			}
		}
		if err != nil {
			c.endInput()
			c.readErr <- err
			return
		}
	}
}

// noteRead records a call of the client's, which is owed an answer (and
// an initialize, whose answer Write recognizes), and an answer to a call of
// the server's.
func (c *lineConn) noteRead(msg jsonrpc.Message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if m.ID.IsValid() {
			c.owed[m.ID.Raw()] = true
			if m.Method == "initialize" {
				c.initIDs[m.ID.Raw()] = true
			}
		}
	case *jsonrpc.Response:
		if m.ID.IsValid() {
			delete(c.asked, m.ID.Raw())
		}
	}
}

// noteWritten records an answer to a call of the client's, and a call of
// the server's: after In ended it can get no answer, so it gets an error.
func (c *lineConn) noteWritten(msg jsonrpc.Message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch m := msg.(type) {
	case *jsonrpc.Response:
		if !m.ID.IsValid() || !c.owed[m.ID.Raw()] {
			return
		}
		delete(c.owed, m.ID.Raw())
	case *jsonrpc.Request:
		if !m.ID.IsValid() {
			return
		}
		if !c.ended {
			c.asked[m.ID.Raw()] = m.ID
			return
		}
		c.madeUp = append(c.madeUp, inputEnded(m.ID))
	default:
		return
	}
	close(c.changed)
	c.changed = make(chan struct{})
}

// endInput notes that In has ended and answers the server's open calls.
func (c *lineConn) endInput() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ended = true
	for _, id := range c.asked {
		c.madeUp = append(c.madeUp, inputEnded(id))
	}
	clear(c.asked)
	close(c.changed)
	c.changed = make(chan struct{})
}

func inputEnded(id jsonrpc.ID) jsonrpc.Message {
	return &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the client closed its input: no answer can come"}}
}

// drain is Read once In has ended: it hands the SDK the answers made up
// for its own calls and returns err (io.EOF) only once every call of the
// client's has been answered, because the SDK writes nothing after its
// reader ends.
func (c *lineConn) drain(ctx context.Context, err error) (jsonrpc.Message, error) {
	for {
		c.mu.Lock()
		if len(c.madeUp) > 0 {
			m := c.madeUp[0]
			c.madeUp = c.madeUp[1:]
			c.mu.Unlock()
			return m, nil
		}
		if len(c.owed) == 0 {
			c.mu.Unlock()
			return nil, err
		}
		changed := c.changed
		c.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
			return nil, io.EOF
		case <-changed:
		}
	}
}

// readFrame reads one line of at most limit bytes. A longer line is read to
// its end and dropped (tooLong), so the next line starts clean.
func readFrame(br *bufio.Reader, limit int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > limit+2 { // +2: "\r\n" is not part of the message
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, tooLong, err
	}
}

// decodeFrame decodes one line. When it is not a JSON-RPC message it
// returns the id to answer (nil when none can be read), an error code and
// the reason.
func decodeFrame(line []byte) (msg jsonrpc.Message, id any, code int64, reason string) {
	switch line[0] {
	case '[':
		return nil, nil, jsonrpc.CodeInvalidRequest, "JSON-RPC batches are not supported: MCP removed batching in protocol version 2025-06-18; send one message per line"
	case '{':
	default:
		if !json.Valid(line) {
			return nil, nil, jsonrpc.CodeParseError, "parse error: each line must be one JSON-RPC message (a JSON object)"
		}
		return nil, nil, jsonrpc.CodeInvalidRequest, "invalid request: a JSON-RPC message is a JSON object"
	}
	if !json.Valid(line) {
		return nil, nil, jsonrpc.CodeParseError, "parse error: the line is not valid JSON"
	}
	m, err := jsonrpc.DecodeMessage(line)
	if err == nil {
		return m, nil, 0, ""
	}
	// Answer with the request's id when it has a usable one, so the client
	// can match the error to its call.
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(line, &probe) == nil && len(probe.ID) > 0 {
		var v any
		if json.Unmarshal(probe.ID, &v) == nil {
			switch v.(type) {
			case string, float64:
				id = v
			}
		}
	}
	return nil, id, jsonrpc.CodeInvalidRequest, "invalid request: " + err.Error()
}

// reject writes an error response. A write failure is left to the next
// Write, which reports it to the SDK.
func (c *lineConn) reject(id any, code int64, reason string) {
	resp := struct {
		JSONRPC string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Error   struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id}
	resp.Error.Code, resp.Error.Message = code, reason
	b, err := json.Marshal(resp)
	if err != nil {
		return
	}
	c.writeLine(b)
}

func (c *lineConn) writeLine(b []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.out.Write(append(b, '\n'))
	return err
}

// Read returns the next message; io.EOF once the connection is closed, or
// once In has ended and every call read from it has been answered.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	case m := <-c.incoming:
		return m, nil
	case err := <-c.readErr:
		c.readErr <- err // later Reads see it too
		return c.drain(ctx, err)
	}
}

// codeErrors gives a JSON-RPC code to an error the SDK returns without one
// (it would go out as code 0, which no client can classify): -32002 for a
// request refused because the session is not initialized yet, -32600
// (invalid request) otherwise, including a failed initialize. It also
// notes a successful answer to initialize.
func (c *lineConn) codeErrors(msg jsonrpc.Message) jsonrpc.Message {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || !resp.ID.IsValid() {
		return msg
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	isInit := c.initIDs[resp.ID.Raw()]
	if isInit {
		delete(c.initIDs, resp.ID.Raw())
		if resp.Error == nil {
			c.initialized = true
		}
	}
	var wire *jsonrpc.Error
	if resp.Error == nil || (errors.As(resp.Error, &wire) && wire.Code != 0) {
		return msg
	}
	coded := *resp
	switch {
	case !isInit && !c.initialized:
		coded.Error = &jsonrpc.Error{Code: codeServerNotInitialized, Message: resp.Error.Error() + ": the server is not initialized; send initialize first"}
	default:
		coded.Error = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: resp.Error.Error()}
	}
	return &coded
}

// Write writes one message as one line.
func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case <-c.closed:
		return sdk.ErrConnectionClosed
	default:
	}
	b, err := encodeMessage(c.codeErrors(msg))
	if err != nil {
		return fmt.Errorf("encode message: %w", err)
	}
	err = c.writeLine(b)
	// Noted even when the write failed: an answer that cannot be written
	// is not waited for.
	c.noteWritten(msg)
	if err != nil {
		return fmt.Errorf("write message: %w", err)
	}
	return nil
}

// encodeMessage is jsonrpc.EncodeMessage with a fast path for successful
// responses: their result is already JSON the SDK marshalled, compact and
// on one line, so it is framed as it is instead of being re-encoded — which
// in encoding/json means compacting every byte once more (about a
// millisecond on a large context pack).
func encodeMessage(msg jsonrpc.Message) ([]byte, error) {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || resp.Error != nil || len(resp.Result) == 0 || bytes.IndexByte(resp.Result, '\n') >= 0 || !resp.ID.IsValid() {
		return jsonrpc.EncodeMessage(msg)
	}
	id, err := json.Marshal(resp.ID.Raw())
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(resp.Result)+len(id)+40)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b = append(b, resp.Result...)
	return append(b, '}'), nil
}

// Close stops reading and closes In when it can be closed. It never closes
// Out: stdout belongs to the process.
func (c *lineConn) Close() error {
	var err error
	c.once.Do(func() {
		close(c.closed)
		if cl, ok := c.in.(io.Closer); ok {
			err = cl.Close()
		}
	})
	return err
}

// SessionID is empty: stdio has one session per process.
func (c *lineConn) SessionID() string { return "" }
