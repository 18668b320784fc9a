package store

import "context"

// ExecForTest runs raw SQL inside a transaction, for tests that prove the
// schema refuses what no code path does.
func (tx *Tx) ExecForTest(ctx context.Context, q string) error {
	_, err := tx.tx.ExecContext(ctx, q)
	return err
}
