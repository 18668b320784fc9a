package store

import "context"

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
