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

// Checkpoints. SQLite's default is for the last connection to a WAL
// database to checkpoint the whole log into the file when it closes, sync
// both, and delete the log, and for the next process to create the log
// again (with a sync of its header and of the directory). A palace
// command is a short process that is nearly always the last connection,
// and would pay that at exit after every write (docs/rationale.md). So
// connections do not checkpoint on close; a closing store checkpoints only once the log is past
// checkpointPages (checkpointOnClose), a long-running process's commits
// at wal_autocheckpoint's default of 1000 pages, and `palace maintenance`
// truncates the log. Durability is WAL's with synchronous=NORMAL either
// way: a commit is in the log before it returns, a crash loses at most
// the last commits since a sync of the log (never the file's
// consistency), and the next opener recovers the log. A process that
// opens the database when no other has it open reads the whole log to
// rebuild its index, so the bound is also what that costs at most.
const (
	// checkpointPages is the log length (in pages of 4 KB) past which a
	// closing store checkpoints: about fifteen recorded context requests
	// (four pages each) or one fold of them (see foldEvery).
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
// connection. The driver exposes no sqlite3_db_config, so the connection's
// handle and thread state are read from the driver's connection; a driver
// whose connection is laid out differently fails the open loudly
// (TestWALBoundedAcrossProcesses guards the behaviour) rather than being
// guessed at.
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

// checkpointOnClose bounds the log a closing store leaves behind: past
// checkpointPages, or after this store created or migrated the schema (a
// rare and large write, after which the file alone is a complete
// database again), it checkpoints the log into the file and truncates it.
// It does not wait for other processes: while one reads, the checkpoint
// stops short (busy) and the next store to close past the bound tries
// again. A checkpoint copies each page once, however many commits in the
// log changed it. Errors are dropped: the log stays, nothing is lost.
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
