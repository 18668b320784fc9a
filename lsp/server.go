package lsp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/palacehq/palace/host"
)

// Options configure a Server. The zero value serves in human mode from the
// default palace home.
type Options struct {
	// Mode is fixed for the server's life. Defaults to host.Human; callers
	// resolve it with host.ResolveMode first. Settings cannot change it.
	Mode host.Mode
	// Home is the palace home: the command line's --home or PALACE_HOME,
	// with a leading "~/" expanded. Defaults to host.DefaultHome(). A
	// client's "home" setting never overrides it (see Settings).
	Home string
	// Actor names who acts in lifecycle commands. Defaults as host does.
	Actor string
	// Log receives the server's log lines. Defaults to io.Discard. It must
	// not be stdout, which carries the protocol.
	Log io.Writer
	// PollInterval is how often each workspace's data_version is checked for
	// changes by other processes. Defaults to 100ms.
	PollInterval time.Duration
	// Debounce is how long diagnostics wait after a change before they are
	// recomputed. Defaults to 50ms.
	Debounce time.Duration
	// Version is reported as serverInfo.version.
	Version string
}

// ErrExitWithoutShutdown is what Serve returns when the client sent exit
// without shutdown first (or the stream ended without either): the LSP
// says the process then exits 1.
var ErrExitWithoutShutdown = errors.New("lsp: exit without shutdown")

// lifecycle is where the session is: LSP's initialize → shutdown → exit.
type lifecycle int

const (
	stateNew lifecycle = iota
	stateInitialized
	stateShutdown
)

// Server is one LSP session. Create it with New and run it with Serve.
type Server struct {
	opts Options
	log  *log.Logger
	// testMethods lets tests add handlers (a panicking one, a blocking one).
	testMethods map[string]handler

	conn jsonrpc2.Conn
	// exited is closed when the client sends exit.
	exited   chan struct{}
	exitOnce sync.Once
	// bg is the session's context: background work ends with it.
	bg     context.Context
	cancel context.CancelFunc
	// bgMu guards stopped and the adds to wg.
	bgMu    sync.Mutex
	stopped bool
	wg      sync.WaitGroup

	// refreshMu guards the client-refresh coalescing flags.
	refreshMu    sync.Mutex
	refreshing   bool
	refreshAgain bool

	// cancels maps in-flight call ids to their cancel functions: our own
	// bookkeeping rather than protocol.CancelHandler, whose $/cancelRequest
	// decoding fails the connection on ids it cannot parse.
	cancels sync.Map
	// docs are the open documents by URI.
	docs  sync.Map
	diags diagnosticsQueue

	// mu guards the session state below.
	mu       sync.Mutex
	state    lifecycle
	caps     clientCaps
	settings Settings
	folders  []string
	spaces   map[string]*workspace // by root
}

// New returns a server; it does nothing until Serve.
func New(opts Options) *Server {
	opts.Mode = cmp.Or(opts.Mode, host.Human)
	opts.Log = cmp.Or[io.Writer](opts.Log, io.Discard)
	if opts.PollInterval <= 0 {
		opts.PollInterval = 100 * time.Millisecond
	}
	if opts.Debounce <= 0 {
		opts.Debounce = 50 * time.Millisecond
	}
	s := &Server{
		opts:     opts,
		log:      log.New(opts.Log, "palace lsp: ", log.LstdFlags|log.Lmicroseconds),
		exited:   make(chan struct{}),
		spaces:   map[string]*workspace{},
		settings: defaultSettings(),
	}
	return s
}

// Serve runs the session over rwc (stdin/stdout for `palace lsp`) until the
// client sends exit, the stream ends or ctx is done. It returns nil after
// shutdown + exit, ErrExitWithoutShutdown when the session ended without
// shutdown, and ctx's error when ctx ended it. Every goroutine it started
// has ended when it returns.
func (s *Server) Serve(ctx context.Context, rwc io.ReadWriteCloser) error {
	s.bg, s.cancel = context.WithCancel(ctx)
	defer s.cancel()
	stream, err := newStream(rwc, func(err error) {
		s.log.Printf("rejected a malformed frame: %v", err)
	})
	if err != nil {
		return err
	}
	s.conn = jsonrpc2.NewConn(stream, jsonrpc2.WithCodec(lspCodec{}), jsonrpc2.WithPreempter(canceller{s}))
	s.diags.init(s)
	s.conn.Go(s.bg, s.handle)

	var result error
	select {
	case <-s.exited:
	case <-s.conn.Done():
	case <-ctx.Done():
		result = ctx.Err()
	}
	s.cancel()
	s.bgMu.Lock()
	s.stopped = true
	s.bgMu.Unlock()
	s.wg.Wait()
	s.closeWorkspaces()
	// Close drains in-flight handlers and closes the stream; a reader parked
	// on a blocking stdin may never return, so do not wait for it forever.
	closed := make(chan struct{})
	go func() {
		_ = s.conn.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(2 * time.Second):
		s.log.Printf("the connection did not close within 2s; leaving it")
	}
	// A handler that was still running may have opened a workspace.
	s.closeWorkspaces()
	if result != nil {
		return result
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != stateShutdown {
		return ErrExitWithoutShutdown
	}
	return nil
}

// goBackground runs fn in the background until the session ends; once the
// session is stopping it does nothing.
func (s *Server) goBackground(fn func(ctx context.Context)) {
	s.bgMu.Lock()
	defer s.bgMu.Unlock()
	if s.stopped {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer s.recoverBackground()
		fn(s.bg)
	}()
}

func (s *Server) recoverBackground() {
	if r := recover(); r != nil {
		s.reportPanic("background work", r)
	}
}

// notify sends a notification, logging a failure (the session may be ending).
func (s *Server) notify(method string, params any) {
	if err := s.conn.Notify(s.bg, method, params); err != nil && s.bg.Err() == nil {
		s.log.Printf("notify %s: %v", method, err)
	}
}

// logMessage sends window/logMessage and writes the log.
func (s *Server) logMessage(typ protocol.MessageType, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.log.Print(msg)
	s.notify(protocol.MethodWindowLogMessage, &protocol.LogMessageParams{Type: typ, Message: "palace: " + msg})
}

// warn tells the user each note about the settings (window/showMessage and
// the log), in the background: a write on the read loop could wait on a
// client that is itself waiting to write.
func (s *Server) warn(notes []string) {
	if len(notes) == 0 {
		return
	}
	s.goBackground(func(context.Context) {
		for _, n := range notes {
			s.logMessage(protocol.MessageTypeWarning, "%s", n)
			s.notify(protocol.MethodWindowShowMessage, &protocol.ShowMessageParams{Type: protocol.MessageTypeWarning, Message: "palace: " + n})
		}
	})
}

func (s *Server) currentSettings() Settings {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settings
}

func (s *Server) clientCapabilities() clientCaps {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caps
}

// GCPercent is the collector's target `palace lsp` runs with unless GOGC
// is set: the server's live heap is small, so Go's default of 100 collects
// often enough to land in requests' latency; 200 halves that for a little
// more resident memory (docs/rationale.md).
const GCPercent = 200
