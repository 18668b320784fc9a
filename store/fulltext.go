package store

import (
	"context"
	"fmt"
)

// Cards join their full-text index (cards_fts) at commit, like evidence,
// not through an insert trigger, which would make every card INSERT a
// multi-write statement and FTS5 flush its pending index at each
// statement's savepoint. Store.Tx indexes the cards a transaction inserted
// with one INSERT … SELECT before it commits, so every committed card is
// indexed, once. The update trigger (statement or content changed) takes
// the old text out of the index, so an UPDATE of either column indexes the
// pending cards first (indexCards): an old text must be in the index to be
// taken out.

// markCardsUnindexed notes, before a transaction's first card insert, the
// rowid its cards start from: they join the full-text index at commit.
func (tx *Tx) markCardsUnindexed(ctx context.Context) error {
	if tx.cardsUnindexed != 0 {
		return nil
	}
	if err := tx.tx.QueryRowContext(ctx, `SELECT COALESCE(max(rowid), 0) + 1 FROM cards`).Scan(&tx.cardsUnindexed); err != nil {
		return fmt.Errorf("insert cards: %w", err)
	}
	return nil
}

// indexCards adds the cards this transaction inserted to cards_fts in one
// statement. Rowids only grow while the transaction holds the write lock
// (cards are never deleted), so the new rows are those from the first.
func (tx *Tx) indexCards(ctx context.Context) error {
	if tx.cardsUnindexed == 0 {
		return nil
	}
	if _, err := tx.tx.ExecContext(ctx, `INSERT INTO cards_fts(rowid, statement, content)
		SELECT rowid, statement, content FROM cards WHERE rowid >= ?`, tx.cardsUnindexed); err != nil {
		return fmt.Errorf("index new cards: %w", err)
	}
	tx.cardsUnindexed = 0
	return nil
}
