package store

import (
	"context"
	"fmt"
	"os"
	"reflect"

	"modernc.org/libc"
	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Checkpoints. Connections do not checkpoint on close, as a short palace
// command is nearly always the last connection (docs/rationale.md): a
// closing store checkpoints once the log is past checkpointPages, a
// long-running process at wal_autocheckpoint's 1000 pages, and `palace
// maintenance` truncates the log. Durability is WAL's with
// synchronous=NORMAL either way.
const (
	// checkpointPages is the log length (in 4 KB pages) past which a
	// closing store checkpoints.
	checkpointPages = 64
	// journalSizeLimit is what a long-running process's log file is cut
	// back to when it restarts after a checkpoint.
	journalSizeLimit = 4 << 20
	// walFrameBytes is one page in the log: its 24-byte frame header and
	// the page (palace keeps SQLite's default page size).
	walFrameBytes = 24 + 4096
)

func init() {
	sqlite.RegisterConnectionHook(func(conn sqlite.ExecQuerierContext, _ string) error {
		return noCheckpointOnClose(conn)
	})
}

// noCheckpointOnClose sets SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE on a new
// connection, reading the handle from the driver's connection (it exposes
// no sqlite3_db_config). A driver laid out differently fails the open
// rather than being guessed at.
func noCheckpointOnClose(conn any) error {
	v := reflect.ValueOf(conn)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("configure connection: unexpected driver connection %T", conn)
	}
	s := v.Elem()
	db, tls := s.FieldByName("db"), s.FieldByName("tls")
	if !db.IsValid() || db.Kind() != reflect.Uintptr || !tls.IsValid() || tls.Type() != reflect.TypeFor[*libc.TLS]() || tls.IsNil() {
		return fmt.Errorf("configure connection: driver connection %T has no sqlite3 handle this palace knows", conn)
	}
	t := (*libc.TLS)(tls.UnsafePointer())
	// sqlite3_db_config(db, op, int onoff, int *pRes): libc.VaList puts
	// each argument in an 8-byte slot.
	bp := t.Alloc(16)
	defer t.Free(16)
	if rc := sqlite3.Xsqlite3_db_config(t, uintptr(db.Uint()), sqlite3.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, libc.VaList(bp, int32(1), uintptr(0))); rc != sqlite3.SQLITE_OK {
		return fmt.Errorf("configure connection: sqlite3_db_config(NO_CKPT_ON_CLOSE) = %d", rc)
	}
	return nil
}

// checkpointOnClose checkpoints and truncates the log past checkpointPages
// or after this store migrated the schema. It never waits for other
// processes (a busy checkpoint is left to the next close), and drops
// errors: the log stays, nothing is lost.
func (s *Store) checkpointOnClose() {
	db := s.db.file()
	if db == nil {
		return
	}
	fi, err := os.Stat(s.path + "-wal")
	if err != nil || (fi.Size() < checkpointPages*walFrameBytes && !s.migrated.Load()) {
		return
	}
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		return
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "PRAGMA busy_timeout = 0"); err != nil {
		return
	}
	var busy, logged, done int
	_ = conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logged, &done)
}
