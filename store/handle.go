package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
)

// handle is the store's database: the file, or, for OpenDeferred on a home
// without one, an empty in-memory database with the current schema that
// answers reads until the first write creates the file.
type handle struct {
	db atomic.Pointer[sql.DB]
	// create, non-nil while deferred, opens the file database; the first
	// write calls it under mu and swaps it in.
	mu     sync.Mutex
	create func(context.Context) (*sql.DB, error)
	// pin holds a connection to the in-memory database while the store is
	// open: a shared-cache memory database lives only while a connection
	// is open.
	pin *sql.Conn
	// empty is the in-memory database after the file replaced it, kept
	// open until Close: a read that loaded it just before the swap must
	// not find it closed (or, without pin, gone).
	empty *sql.DB
}

func newHandle(db *sql.DB) *handle {
	h := &handle{}
	h.db.Store(db)
	return h
}

// writable returns the database a write must use, creating the file on
// the first write of a deferred store.
func (h *handle) writable(ctx context.Context) (*sql.DB, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.create == nil {
		return h.db.Load(), nil
	}
	db, err := h.create(ctx)
	if err != nil {
		return nil, err
	}
	h.empty = h.db.Swap(db)
	h.create = nil
	return db, nil
}

func (h *handle) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return h.db.Load().QueryContext(ctx, query, args...)
}

func (h *handle) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return h.db.Load().QueryRowContext(ctx, query, args...)
}

func (h *handle) QueryRow(query string, args ...any) *sql.Row {
	return h.db.Load().QueryRow(query, args...)
}

func (h *handle) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	db, err := h.writable(ctx)
	if err != nil {
		return nil, err
	}
	return db.ExecContext(ctx, query, args...)
}

func (h *handle) BeginTx(ctx context.Context, opts *sql.TxOptions) (*sql.Tx, error) {
	db, err := h.writable(ctx)
	if err != nil {
		return nil, err
	}
	return db.BeginTx(ctx, opts)
}

// Conn is a dedicated connection to the database as it is now.
func (h *handle) Conn(ctx context.Context) (*sql.Conn, error) {
	return h.db.Load().Conn(ctx)
}

// file is the file database, nil while a deferred store has not created
// it.
func (h *handle) file() *sql.DB {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.create != nil {
		return nil
	}
	return h.db.Load()
}

func (h *handle) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.create = nil
	h.unpin()
	err := h.db.Load().Close()
	if h.empty != nil {
		h.empty.Close()
	}
	return err
}

func (h *handle) unpin() {
	if h.pin != nil {
		h.pin.Close()
		h.pin = nil
	}
}

// deferredSeq names each deferred store's in-memory database apart.
var deferredSeq atomic.Int64

// OpenDeferred is Open for a caller that may only read: when path does not
// exist yet, the store answers from an empty database with the current
// schema and creates the file (and its directory) only when something is
// written. When path exists it is Open.
func OpenDeferred(ctx context.Context, path string) (*Store, error) {
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		return Open(ctx, path)
	}
	if err := registerFunctions(); err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	// A named shared-cache memory database: every pooled connection sees
	// the same (empty) tables.
	mem, err := sql.Open("sqlite", fmt.Sprintf("file:palace-deferred-%d?mode=memory&cache=shared&_pragma=foreign_keys(1)", deferredSeq.Add(1)))
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	pin, err := mem.Conn(ctx)
	if err != nil {
		mem.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	s := newStore(newHandle(mem), path)
	s.db.pin = pin
	if err := s.migrate(ctx); err != nil {
		s.db.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	s.db.create = func(ctx context.Context) (*sql.DB, error) {
		file, err := Open(ctx, path)
		if err != nil {
			return nil, err
		}
		return file.db.db.Load(), nil
	}
	return s, nil
}
