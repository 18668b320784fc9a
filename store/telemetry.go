package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
)

// InjectionRequests returns the recorded requests named requestID, oldest
// first: what each did with each card, as long as the raw record is kept
// (see PruneTelemetry). Views are recorded under the request id "view".
func (s *Store) InjectionRequests(ctx context.Context, requestID string) ([]InjectionRequest, error) {
	out, err := s.loadRequests(ctx, `WHERE request_id = ?`, requestID)
	if err != nil {
		return nil, fmt.Errorf("read injection request %s: %w", requestID, err)
	}
	return out, nil
}

// EachInjectionRequest calls fn for every kept request record from since
// on ("" = all), oldest first, until fn returns an error.
func (s *Store) EachInjectionRequest(ctx context.Context, since string, fn func(InjectionRequest) error) error {
	out, err := s.loadRequests(ctx, `WHERE created_at >= ?`, since)
	if err != nil {
		return fmt.Errorf("read injection requests: %w", err)
	}
	for _, r := range out {
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

// loadRequests reads the records a WHERE clause selects and names their
// cards.
func (s *Store) loadRequests(ctx context.Context, where string, args ...any) ([]InjectionRequest, error) {
	_ = s.FlushRecords() // a failure stays queued for Close to report
	rows, err := s.db.QueryContext(ctx, `SELECT request_id, created_at, cards, scope_skipped FROM injection_requests `+where+` ORDER BY seq`, args...)
	if err != nil {
		return nil, err
	}
	var out []InjectionRequest
	var coded []map[string][]int64
	need := map[int64]bool{}
	for rows.Next() {
		var r InjectionRequest
		var v any
		if err := rows.Scan(&r.RequestID, &r.CreatedAt, &v, &r.ScopeSkipped); err != nil {
			rows.Close()
			return nil, err
		}
		byRow, named, err := decodeRequest(v)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("request %s: %w", r.RequestID, err)
		}
		r.Cards = named
		for _, rs := range byRow {
			for _, id := range rs {
				need[id] = true
			}
		}
		out, coded = append(out, r), append(coded, byRow)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	names, err := cardIDsOf(ctx, s.db, slices.Collect(maps.Keys(need)))
	if err != nil {
		return nil, err
	}
	for i, byRow := range coded {
		if byRow == nil {
			continue
		}
		out[i].Cards = make(map[string][]string, len(byRow))
		for o, rs := range byRow {
			for _, r := range rs {
				out[i].Cards[o] = append(out[i].Cards[o], ids(names, r))
			}
		}
	}
	return out, nil
}

// ids names a rowid ("#rowid" when no card has it: cards are never
// deleted, so only a damaged file shows one).
func ids(names map[int64]string, rowid int64) string {
	if n := names[rowid]; n != "" {
		return n
	}
	return fmt.Sprintf("#%d", rowid)
}

// CountInjectionRequests counts kept request records, optionally of one
// request id ("" = all).
func (s *Store) CountInjectionRequests(ctx context.Context, requestID string) (int, error) {
	_ = s.FlushRecords() // a failure stays queued for Close to report
	q, args := `SELECT count(*) FROM injection_requests`, []any(nil)
	if requestID != "" {
		q, args = q+` WHERE request_id = ?`, []any{requestID}
	}
	return count(ctx, s.db, "count injection requests", q, args...)
}

// pruneBatch bounds one retention transaction, so a large backlog never
// holds the write lock for long.
const pruneBatch = 2000

// PruneTelemetry deletes raw request records older than before, at most
// limit of them (0 = all), in transactions of at most pruneBatch rows.
// Their counts stay in the rollups; records not folded yet are kept. It
// returns the number of records deleted.
func (s *Store) PruneTelemetry(ctx context.Context, before string, limit int) (int, error) {
	total := 0
	for limit == 0 || total < limit {
		n := pruneBatch
		if limit > 0 {
			n = min(n, limit-total)
		}
		var deleted int64
		err := s.Tx(ctx, func(tx *Tx) error {
			res, err := tx.tx.ExecContext(ctx, `DELETE FROM injection_requests WHERE seq IN
				(SELECT seq FROM injection_requests WHERE created_at < ? AND seq <= (SELECT seq FROM injection_fold) LIMIT ?)`, before, n)
			if err != nil {
				return err
			}
			if deleted, err = res.RowsAffected(); err != nil {
				return err
			}
			// Request signatures live as long as the raw records.
			_, err = tx.pruneRequestTerms(ctx, before, n)
			return err
		})
		if err != nil {
			return total, fmt.Errorf("prune telemetry before %s: %w", before, err)
		}
		total += int(deleted)
		if int(deleted) < n {
			break
		}
	}
	return total, nil
}

// TelemetryStats describe the database file and its telemetry.
type TelemetryStats struct {
	// FileBytes is the database file's size, WALBytes its write-ahead log's.
	FileBytes int64 `json:"file_bytes"`
	WALBytes  int64 `json:"wal_bytes"`
	// FreeBytes are unused pages inside the file (reused by later writes;
	// VACUUM gives them back to the filesystem).
	FreeBytes int64 `json:"free_bytes"`
	// Requests counts the kept raw request records, oldest first from
	// OldestDay ("" when none).
	Requests  int    `json:"requests"`
	OldestDay string `json:"oldest_day,omitempty"`
	// DailyRows counts the per-card per-day rollup rows.
	DailyRows int `json:"daily_rows"`
}

// Telemetry reads TelemetryStats.
func (s *Store) Telemetry(ctx context.Context) (TelemetryStats, error) {
	_ = s.FlushRecords() // a failure stays queued for Close to report
	var st TelemetryStats
	var pageSize, pages, free int64
	for _, p := range []struct {
		name string
		v    *int64
	}{{"page_size", &pageSize}, {"page_count", &pages}, {"freelist_count", &free}} {
		if err := s.db.QueryRowContext(ctx, "PRAGMA "+p.name).Scan(p.v); err != nil {
			return st, fmt.Errorf("read %s: %w", p.name, err)
		}
	}
	st.FileBytes, st.FreeBytes = pageSize*pages, pageSize*free
	if fi, err := os.Stat(s.path + "-wal"); err == nil {
		st.WALBytes = fi.Size()
	}
	var oldest sql.NullString
	if err := s.db.QueryRowContext(ctx, `SELECT count(*), (SELECT min(created_at) FROM injection_requests) FROM injection_requests`).Scan(&st.Requests, &oldest); err != nil {
		return st, fmt.Errorf("count injection requests: %w", err)
	}
	if oldest.Valid {
		st.OldestDay = oldest.String[:min(len(oldest.String), 10)]
	}
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM injection_daily`).Scan(&st.DailyRows); err != nil {
		return st, fmt.Errorf("count injection rollups: %w", err)
	}
	return st, nil
}

// Compact refreshes query statistics (PRAGMA optimize), checkpoints and
// truncates the write-ahead log, and with vacuum first rebuilds the file
// (it needs free disk about the file's size and blocks every writer). VACUUM
// keeps the rowids the full-text indexes rely on.
func (s *Store) Compact(ctx context.Context, vacuum bool) error {
	_ = s.FlushRecords() // a failure stays queued for Close to report
	if vacuum {
		if _, err := s.db.ExecContext(ctx, "VACUUM"); err != nil {
			return fmt.Errorf("vacuum %s: %w", s.path, err)
		}
	}
	if _, err := s.db.ExecContext(ctx, "PRAGMA optimize"); err != nil {
		return fmt.Errorf("optimize %s: %w", s.path, err)
	}
	var busy, logged, done int
	if err := s.db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logged, &done); err != nil {
		return fmt.Errorf("checkpoint %s: %w", s.path, err)
	}
	if busy != 0 {
		return fmt.Errorf("checkpoint %s: %w", s.path, ErrBusyCheckpoint)
	}
	return nil
}

// ErrBusyCheckpoint is returned by Compact when another process kept the
// write-ahead log from being fully checkpointed: try again when palace is
// idle.
var ErrBusyCheckpoint = errors.New("another process is using the database; the write-ahead log was not fully checkpointed")
