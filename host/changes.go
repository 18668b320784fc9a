package host

import (
	"context"
	"database/sql"
	"sync"
)

// ChangeProbe notices commits to the palace database by any other
// connection, so a long-running server knows when its caches are stale. It
// holds one dedicated connection until Close.
type ChangeProbe struct {
	h *Host
	// mu guards conn: one query at a time on the dedicated connection.
	mu   sync.Mutex
	conn *sql.Conn
}

// NewChangeProbe opens a probe on a connection of its own.
func (h *Host) NewChangeProbe(ctx context.Context) (*ChangeProbe, error) {
	conn, err := h.store.Conn(ctx)
	if err != nil {
		return nil, internal(err, "open change probe")
	}
	return &ChangeProbe{h: h, conn: conn}, nil
}

// Version returns SQLite's data_version as the probe's connection sees it:
// it changes whenever another connection commits, and only then.
func (p *ChangeProbe) Version(ctx context.Context) (int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	v, err := p.h.store.DataVersion(ctx, p.conn)
	if err != nil {
		return 0, internal(err, "read data version")
	}
	return v, nil
}

// Close releases the probe's connection.
func (p *ChangeProbe) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.conn.Close()
}
