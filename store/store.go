// Package store owns palace's SQLite file: the schema, its migrations and every
// SQL statement palace runs. It knows no policy and no lifecycle rule beyond
// what the schema enforces (enums, append-only evidence and events); callers
// in host decide what may change and pass the decisions in.
//
// The database is one file opened through modernc.org/sqlite (pure Go, no cgo)
// in WAL mode with a busy timeout, foreign keys on, and write transactions
// that take the write lock up front (BEGIN IMMEDIATE) so concurrent writers
// queue instead of failing with "database is locked".
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/internal/cache"
)

// BusyTimeout is how long a connection waits for another writer before an
// operation fails. Batch imports from several processes queue behind each
// other for at most this long.
const BusyTimeout = 30 * time.Second

// cacheSize and mmapSize size each connection's page cache and memory map.
const (
	cacheSize = 16 << 20
	mmapSize  = 256 << 20
)

// ErrSchemaTooNew is returned by Open when the file was written by a newer palace.
var ErrSchemaTooNew = errors.New("database schema is newer than this palace")

// ErrNotFound is returned by single-row lookups that match nothing.
var ErrNotFound = errors.New("not found")

// Store is an open palace database. It is safe for concurrent use.
type Store struct {
	db   *handle
	path string
	// Caches of data read, as of the data version (see dataVersion).
	cards      versioned[int64, domain.Card]
	texts      versioned[int64, cardText]
	selections versioned[string, []selectionRow]
	links      versioned[string, []domain.Link]
	fullLinks  versioned[string, []domain.Link]
	evidence   versioned[int64, domain.Evidence]
	citations  versioned[struct{}, map[string][]CodeCitation]
	memory     versioned[string, memoryRow]
	rowids     cache.Memo[string, int64]
	// evidenceRowids maps evidence ids to rowids, which never change.
	evidenceRowids cache.Memo[string, int64]
	refs           cache.Memo[string, string]
	// closing is set by Close, so the last write does not refill caches.
	closing atomic.Bool
	// records queues this process's request records (see QueueRequest).
	records recordQueue
	// windows caches cards' running counts as of the fold mark.
	windows cache.Map[int64, string, []windowRow]
	// writeSlot queues this process's write transactions (see Tx): a
	// channel of one, so a wait can give up with the context or the busy
	// timeout as SQLite's would.
	writeSlot chan struct{}
	// migrated is set once this store created or migrated the schema:
	// it checkpoints when it closes (see checkpointOnClose).
	migrated atomic.Bool
}

// Open opens (creating if needed) the database at path and migrates it to
// SchemaVersion. A database whose user_version is newer than SchemaVersion is
// refused with ErrSchemaTooNew naming both versions, and left untouched.
func Open(ctx context.Context, path string) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", BusyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", fmt.Sprintf("cache_size(%d)", -cacheSize/1024))
	q.Add("_pragma", fmt.Sprintf("mmap_size(%d)", mmapSize))
	// Statement journals and temporary b-trees stay in memory.
	q.Add("_pragma", "temp_store(MEMORY)")
	// Closing connections leave the log (see checkpoint.go).
	q.Add("_pragma", fmt.Sprintf("journal_size_limit(%d)", journalSizeLimit))
	q.Add("_txlock", "immediate")
	dsn := "file:" + path + "?" + q.Encode()
	if err := registerFunctions(); err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	s := newStore(newHandle(db), path)
	if err := s.migrateRetrying(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return s, nil
}

// migrateRetrying runs migrate, retrying for up to BusyTimeout while SQLite
// answers SQLITE_BUSY: a file another process is creating answers BUSY at
// once, without the busy handler, until its WAL switch is written.
func (s *Store) migrateRetrying(ctx context.Context) error {
	deadline := time.Now().Add(BusyTimeout)
	for wait := 2 * time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
		err := s.migrate(ctx)
		if err == nil || !IsBusy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}

// Path is the database file path.
func (s *Store) Path() string { return s.path }

// Close closes the database after writing the request records still
// queued (see FlushRecords; a write that failed is its error), checkpointing
// the write-ahead log first when it is long (see checkpointOnClose).
func (s *Store) Close() error {
	s.closing.Store(true) // no cache is worth refilling now
	flushErr := s.FlushRecords()
	s.checkpointOnClose()
	if err := s.db.Close(); err != nil {
		return err
	}
	return flushErr
}

// Version reads the schema version recorded in the file.
func (s *Store) Version(ctx context.Context) (int, error) {
	var v int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v, nil
}

// DataVersion returns SQLite's data_version for one pooled connection: it
// changes when another connection or process commits. Cheap enough to poll.
func (s *Store) DataVersion(ctx context.Context, conn *sql.Conn) (int64, error) {
	var v int64
	if err := conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v); err != nil {
		return 0, fmt.Errorf("read data_version: %w", err)
	}
	return v, nil
}

// Conn returns a dedicated connection (for DataVersion polling).
func (s *Store) Conn(ctx context.Context) (*sql.Conn, error) { return s.db.Conn(ctx) }

// IntegrityCheck runs PRAGMA integrity_check and returns its rows ("ok" when sound).
func (s *Store) IntegrityCheck(ctx context.Context) ([]string, error) {
	var out []string
	err := queryEach(ctx, s.db, "PRAGMA integrity_check", nil, func(rows *sql.Rows) error {
		var line string
		if err := rows.Scan(&line); err != nil {
			return err
		}
		out = append(out, line)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("integrity check: %w", err)
	}
	return out, nil
}

func (s *Store) migrate(ctx context.Context) error {
	v, err := s.Version(ctx)
	if err != nil {
		return err
	}
	if v > SchemaVersion {
		return fmt.Errorf("%w: the file is at schema version %d, this palace knows up to version %d; upgrade palace or use a different --home", ErrSchemaTooNew, v, SchemaVersion)
	}
	if v == SchemaVersion {
		return nil
	}
	return s.Tx(ctx, func(tx *Tx) error {
		// Re-read under the write lock: another process may have migrated meanwhile.
		var cur int
		if err := tx.tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&cur); err != nil {
			return fmt.Errorf("read schema version: %w", err)
		}
		if cur > SchemaVersion {
			return fmt.Errorf("%w: the file is at schema version %d, this palace knows up to version %d", ErrSchemaTooNew, cur, SchemaVersion)
		}
		for i := cur; i < SchemaVersion; i++ {
			if _, err := tx.tx.ExecContext(ctx, migrations[i]); err != nil {
				return fmt.Errorf("migrate schema %d → %d: %w", i, i+1, err)
			}
		}
		if _, err := tx.tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion)); err != nil {
			return fmt.Errorf("set schema version: %w", err)
		}
		s.migrated.Store(true)
		return nil
	})
}

// Tx is one write transaction. Its methods are the only way palace changes data.
type Tx struct {
	tx    *sql.Tx
	stmts map[string]*sql.Stmt
	// unindexed is the rowid of the first evidence row this transaction
	// inserted, 0 for none: those rows join the full-text index at commit.
	unindexed int64
	// cardsUnindexed is the same for cards (see indexNew).
	cardsUnindexed int64
}

// Tx runs fn in one IMMEDIATE transaction: it commits when fn returns nil and
// rolls back otherwise (also on panic), so a change, its links and its event
// land together or not at all.
func (s *Store) Tx(ctx context.Context, fn func(*Tx) error) (err error) {
	// Writers of one process queue here, not in SQLite's busy handler, which
	// polls by sleeping; other processes still meet the busy handler.
	wait := time.NewTimer(BusyTimeout)
	select {
	case s.writeSlot <- struct{}{}:
		wait.Stop()
	case <-ctx.Done():
		wait.Stop()
		return fmt.Errorf("begin transaction: %w", ctx.Err())
	case <-wait.C:
		return fmt.Errorf("begin transaction: another write of this process held the database for %s", BusyTimeout)
	}
	defer func() { <-s.writeSlot }()
	sqlTx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	tx := &Tx{tx: sqlTx, stmts: map[string]*sql.Stmt{}}
	defer func() {
		for _, st := range tx.stmts {
			st.Close()
		}
		if p := recover(); p != nil {
			sqlTx.Rollback()
			panic(p)
		}
		if err != nil {
			sqlTx.Rollback()
			return
		}
		if cerr := sqlTx.Commit(); cerr != nil {
			err = fmt.Errorf("commit: %w", cerr)
		}
	}()
	if err = fn(tx); err != nil {
		return err
	}
	if err = tx.indexNew(ctx, "cards", cardTextCols, &tx.cardsUnindexed); err != nil {
		return err
	}
	return tx.indexNew(ctx, "evidence", "content", &tx.unindexed)
}

// stmt returns a statement prepared once per transaction (batch imports
// reuse it for every row).
func (tx *Tx) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := tx.stmts[query]; ok {
		return st, nil
	}
	st, err := tx.tx.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	tx.stmts[query] = st
	return st, nil
}

func (tx *Tx) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := tx.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

// IsConstraint reports whether err is an SQLite constraint violation (CHECK,
// UNIQUE, FOREIGN KEY, or an append-only trigger).
func IsConstraint(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code()&0xff == sqlite3.SQLITE_CONSTRAINT
	}
	return false
}

// IsBusy reports whether err is SQLITE_BUSY/LOCKED (the busy timeout ran out).
func IsBusy(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		c := se.Code() & 0xff
		return c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED
	}
	return false
}

// querier is what both *sql.DB and *sql.Tx offer for reads.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// count reads the one integer query selects; a failure is wrapped with what.
func count(ctx context.Context, q querier, what, query string, args ...any) (int, error) {
	var n int
	if err := q.QueryRowContext(ctx, query, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	return n, nil
}

// queryEach runs query and calls fn for each row, closing the rows after. It
// returns the first error of the query, of fn or of the iteration, unwrapped.
func queryEach(ctx context.Context, q querier, query string, args []any, fn func(*sql.Rows) error) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// TimeFormat is how every timestamp is stored: RFC3339 UTC with milliseconds.
const TimeFormat = "2006-01-02T15:04:05.000Z"

// FormatTime renders t in TimeFormat.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeFormat) }
