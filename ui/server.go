package ui

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/palacehq/palace/host"
)

// Options configure a Server. The zero value is ready to use.
type Options struct {
	// Token is the session secret the printed URL carries. Defaults to 32
	// random bytes in hex; tests fix it.
	Token string
	// Version is shown in the page footer.
	Version string
	// Logger receives one line per failed request. Defaults to none.
	Logger *slog.Logger
	// Poll is how often the live view asks the database whether another
	// connection committed. Defaults to 250 ms.
	Poll time.Duration
}

// Server is the desk of one palace, reached at one address. It is safe for
// concurrent use.
type Server struct {
	h     *host.Host
	human bool
	base  string
	token string
	csrf  string
	hosts map[string]bool
	opts  Options
	log   *slog.Logger
	pages map[string]*template.Template
	live  *live
	kept  auditKept

	// flashMu guards flashes: the message of a change, shown once on the
	// page the change redirects to.
	flashMu sync.Mutex
	flashes map[string]string
}

// New returns the desk of h for a server reached at addr (the listener's
// address): requests must name addr, or a loopback name with its port when
// addr is loopback, in their Host header. In agent mode (h.Mode()) the desk
// is read-only. The live view holds one database connection of h until
// Close.
func New(ctx context.Context, h *host.Host, addr net.Addr, opts Options) (*Server, error) {
	token := opts.Token
	if token == "" {
		var err error
		if token, err = newToken(); err != nil {
			return nil, fmt.Errorf("make the session token: %w", err)
		}
	}
	if opts.Poll <= 0 {
		opts.Poll = 250 * time.Millisecond
	}
	log := cmp.Or(opts.Logger, slog.New(slog.DiscardHandler))
	p, err := loadPages()
	if err != nil {
		return nil, err
	}
	lv, err := newLive(ctx, h, opts.Poll)
	if err != nil {
		return nil, err
	}
	base := "http://" + addr.String()
	if tcp, ok := addr.(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
		// Listening everywhere: the printed URL is this machine's own.
		base = "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(tcp.Port))
	}
	return &Server{
		h: h, human: h.Mode() == host.Human, base: base, token: token, csrf: csrfFor(token),
		hosts: allowedHosts(addr), opts: opts, log: log, pages: p, live: lv, flashes: map[string]string{},
	}, nil
}

// URL is the address of path on the desk with the session token, the one
// to print or open: the first visit trades the token for a cookie.
func (s *Server) URL(path string) string {
	u, err := url.Parse(s.base + path)
	if err != nil {
		return s.base + "/?token=" + s.token
	}
	q := u.Query()
	q.Set("token", s.token)
	u.RawQuery = q.Encode()
	return u.String()
}

// Handler serves the desk, every request through the security guard.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", assetServer()))
	mux.HandleFunc("GET /{$}", s.queue)
	mux.HandleFunc("GET /queue", s.queue)
	mux.HandleFunc("GET /attention", s.attention)
	mux.HandleFunc("GET /inspect", s.inspect)
	mux.HandleFunc("GET /card/{id}", s.card)
	mux.HandleFunc("GET /mailbox", s.mailbox)
	mux.HandleFunc("GET /api/complete", s.complete)
	mux.HandleFunc("GET /events", s.events)
	for name := range changes {
		mux.HandleFunc("POST /card/{id}/"+name, s.change(name))
	}
	return s.guard(mux)
}

// Serve answers on ln until ctx is done, then shuts down: requests in
// flight get up to five seconds to finish, live views end at once.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("serve the desk: %w", err)
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("stop the desk: %w", err)
	}
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve the desk: %w", err)
	}
	return nil
}

// Close releases the live view's database connection.
func (s *Server) Close() error { return s.live.close() }

// setFlash keeps a message for the next page and returns its key.
func (s *Server) setFlash(msg string) string {
	key, err := newToken()
	if err != nil {
		return ""
	}
	key = key[:16]
	s.flashMu.Lock()
	defer s.flashMu.Unlock()
	// A reviewer reads each message once; a handful outstanding is plenty.
	if len(s.flashes) > 64 {
		clear(s.flashes)
	}
	s.flashes[key] = msg
	return key
}

// takeFlash returns and forgets the message of key.
func (s *Server) takeFlash(key string) string {
	s.flashMu.Lock()
	defer s.flashMu.Unlock()
	f := s.flashes[key]
	delete(s.flashes, key)
	return f
}
