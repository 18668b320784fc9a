package ui

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/palacehq/palace/host"
)

// live tells open pages that the palace changed: one poller asks the
// database's data version (a few microseconds) every poll interval while
// at least one page listens, and wakes every listener when it moves — a
// commit by the CLI, an agent's MCP server, or this desk.
type live struct {
	probe *host.ChangeProbe
	poll  time.Duration

	// mu guards subs, version and stop, which ends the poller while one runs.
	mu      sync.Mutex
	subs    map[chan int64]struct{}
	version int64
	stop    context.CancelFunc
}

func newLive(ctx context.Context, h *host.Host, poll time.Duration) (*live, error) {
	p, err := h.NewChangeProbe(ctx)
	if err != nil {
		return nil, fmt.Errorf("watch the palace for changes: %w", err)
	}
	v, err := p.Version(ctx)
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("watch the palace for changes: %w", err)
	}
	return &live{probe: p, poll: poll, subs: map[chan int64]struct{}{}, version: v}, nil
}

// subscribe returns a channel that receives the new version after each
// change, and the function that ends the subscription.
func (l *live) subscribe() (<-chan int64, func()) {
	ch := make(chan int64, 1)
	l.mu.Lock()
	l.subs[ch] = struct{}{}
	if l.stop == nil {
		var ctx context.Context
		ctx, l.stop = context.WithCancel(context.Background())
		go l.run(ctx)
	}
	l.mu.Unlock()
	return ch, func() {
		l.mu.Lock()
		delete(l.subs, ch)
		if len(l.subs) == 0 {
			l.halt()
		}
		l.mu.Unlock()
	}
}

// halt stops the poller, if one runs. Callers hold mu.
func (l *live) halt() {
	if l.stop != nil {
		l.stop()
		l.stop = nil
	}
}

// run polls until ctx ends (the last listener left, or close).
func (l *live) run(ctx context.Context) {
	t := time.NewTicker(l.poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		v, err := l.probe.Version(ctx)
		if err != nil {
			continue
		}
		l.mu.Lock()
		if v != l.version {
			l.version = v
			for ch := range l.subs {
				select {
				case ch <- v:
				default: // a wake-up is pending already
				}
			}
		}
		l.mu.Unlock()
	}
}

func (l *live) close() error {
	l.mu.Lock()
	l.halt()
	l.mu.Unlock()
	return l.probe.Close()
}

// events streams "change" server-sent events to a page: one when the
// palace changes, and a comment every 20 s so proxies keep the stream.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "retry: 1000\n\n")
	fl.Flush()
	ch, done := s.live.subscribe()
	defer done()
	keep := time.NewTicker(20 * time.Second)
	defer keep.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case v := <-ch:
			if _, err := fmt.Fprintf(w, "event: change\ndata: %d\n\n", v); err != nil {
				return
			}
		case <-keep.C:
			if _, err := fmt.Fprintf(w, ": keep-alive\n\n"); err != nil {
				return
			}
		}
		fl.Flush()
	}
}
