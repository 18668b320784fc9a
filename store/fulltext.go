package store

import (
	"context"
	"fmt"
)

// Cards and evidence join their full-text indexes at commit, not through
// insert triggers (docs/rationale.md): Store.Tx indexes a transaction's new
// rows of each in one statement, so every committed row is indexed once. An
// UPDATE of a card's statement or content indexes the pending cards first:
// the update trigger can only take out an indexed text.

// cardTextCols are the columns of cards that cards_fts indexes.
const cardTextCols = "statement, content"

// markUnindexed notes in first, before a transaction's first insert into
// table, the rowid its new rows start from.
func (tx *Tx) markUnindexed(ctx context.Context, table string, first *int64) error {
	if *first != 0 {
		return nil
	}
	if err := tx.tx.QueryRowContext(ctx, `SELECT COALESCE(max(rowid), 0) + 1 FROM `+table).Scan(first); err != nil {
		return fmt.Errorf("insert %s: %w", table, err)
	}
	return nil
}

// indexNew adds the rows of table from rowid *first on to its full-text
// index in one statement. Rowids only grow while the transaction holds the
// write lock and neither table is deleted from, so the new rows are those
// from the first.
func (tx *Tx) indexNew(ctx context.Context, table, cols string, first *int64) error {
	if *first == 0 {
		return nil
	}
	if _, err := tx.tx.ExecContext(ctx, `INSERT INTO `+table+`_fts(rowid, `+cols+`)
		SELECT rowid, `+cols+` FROM `+table+` WHERE rowid >= ?`, *first); err != nil {
		return fmt.Errorf("index new %s: %w", table, err)
	}
	*first = 0
	return nil
}
