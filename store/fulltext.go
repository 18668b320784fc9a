package store

import (
	"context"
	"fmt"
)

// Cards join cards_fts at commit, like evidence (docs/rationale.md): Store.Tx
// indexes a transaction's new cards in one statement, so every committed card
// is indexed once. An UPDATE of statement or content indexes the pending
// cards first: the update trigger can only take out an indexed text.

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
