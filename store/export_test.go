package store

import (
	"context"
	"github.com/palacehq/palace/domain"
	"strings"
)

// ExecForTest runs raw SQL inside a transaction, for tests that prove the
// schema refuses what no code path does.
func (tx *Tx) ExecForTest(ctx context.Context, q string) error {
	_, err := tx.tx.ExecContext(ctx, q)
	return err
}

// Pragma reads an integer pragma through the store's pool.
func Pragma(s *Store, name string) (int64, error) {
	var v int64
	err := s.db.QueryRow("PRAGMA " + name).Scan(&v)
	return v, err
}

// RowsForTest runs a read and returns its rows as strings, for tests
// that compare against an older SQL shape.
func (s *Store) RowsForTest(ctx context.Context, q string, args ...any) ([][]string, error) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]string
	for rows.Next() {
		vals := make([]string, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		out = append(out, vals)
	}
	return out, rows.Err()
}

// MigrationIndex is the schema version before the first migration whose
// text holds marker (its index in migrations), -1 when none does: tests
// that take a database back to just before one migration find it by what
// it creates, never by its number.
func MigrationIndex(marker string) int {
	for i, m := range migrations {
		if strings.Contains(m, marker) {
			return i
		}
	}
	return -1
}

// RecordRequestTerms writes a request's terms alone, for tests of the
// signature's reads and pruning (palace writes them with the request's
// telemetry, RecordRequest).
func (s *Store) RecordRequestTerms(ctx context.Context, r RequestTerms) error {
	return s.Tx(ctx, func(tx *Tx) error { return tx.recordRequestTerms(ctx, r) })
}

// PragmaForTest reads an integer pragma on the transaction's connection.
func (tx *Tx) PragmaForTest(ctx context.Context, name string) (int64, error) {
	var v int64
	err := tx.tx.QueryRowContext(ctx, "PRAGMA "+name).Scan(&v)
	return v, err
}

// The raw writers below are WriteCards' parts; the store's own tests
// reach them to set up rows and to compare a batch with single writes.

func (tx *Tx) InsertCard(ctx context.Context, c domain.Card) error { return tx.insertCard(ctx, c) }

func (tx *Tx) InsertCards(ctx context.Context, cs []domain.Card) error {
	return tx.insertCards(ctx, cs)
}

func (tx *Tx) InsertLink(ctx context.Context, l domain.Link) (bool, error) {
	return tx.insertLink(ctx, l)
}

func (tx *Tx) InsertLinks(ctx context.Context, ls []domain.Link) error {
	return tx.insertLinks(ctx, ls)
}

func (tx *Tx) AppendEvent(ctx context.Context, e domain.Event) (domain.Event, error) {
	return tx.appendEvent(ctx, e)
}

func (tx *Tx) AppendEvents(ctx context.Context, es []domain.Event) ([]domain.Event, error) {
	return tx.appendEvents(ctx, es)
}

func (tx *Tx) SetCardStatus(ctx context.Context, id string, from, to domain.Status, now string) error {
	return tx.setCardStatus(ctx, id, from, to, now)
}

func (tx *Tx) InsertContest(ctx context.Context, c Contest) error { return tx.insertContest(ctx, c) }

// MigrationForTest is the text of migration i, to run it again.
func MigrationForTest(i int) string { return migrations[i] }

// MigrationFor is the schema version from which the migration holding
// fragment runs (its index in migrations), -1 when none does.
func MigrationFor(fragment string) int {
	for i, m := range migrations {
		if strings.Contains(m, fragment) {
			return i
		}
	}
	return -1
}

// The store's knobs, for tests that check them.
const (
	CacheSize       = cacheSize
	MmapSize        = mmapSize
	FoldEvery       = foldEvery
	CheckpointPages = checkpointPages
)
