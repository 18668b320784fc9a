package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
)

// OutcomeDay is what context packs did with one card on one day, from the
// per-day rollup that outlives the raw request records.
type OutcomeDay struct {
	Day     string `json:"day"`
	Outcome string `json:"outcome"`
	N       int    `json:"n"`
}

// CardOutcomeDays returns the per-day pack outcomes of card id from since
// (a YYYY-MM-DD day, inclusive; "" for all) on, oldest day first, queued
// records written first.
func (s *Store) CardOutcomeDays(ctx context.Context, id, since string) ([]OutcomeDay, error) {
	_ = s.FlushRecords() // a failure stays queued for Close to report
	var out []OutcomeDay
	err := queryEach(ctx, s.db, `SELECT day, outcome, n FROM injection_daily WHERE card_id = ? AND day >= ? ORDER BY day, outcome`, []any{id, since}, func(rows *sql.Rows) error {
		var d OutcomeDay
		if err := rows.Scan(&d.Day, &d.Outcome, &d.N); err != nil {
			return err
		}
		out = append(out, d)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read pack outcomes of %s: %w", id, err)
	}
	return out, nil
}

// CardRequest is one kept request record that named a card, with what the
// request did with it.
type CardRequest struct {
	RequestID string `json:"request_id"`
	CreatedAt string `json:"created_at"`
	Outcome   string `json:"outcome"`
}

// CardRequests returns up to limit of the newest kept request records
// that named card id, newest first, reading at most scan records back (no
// index by card); older or pruned ones are not found, though
// CardOutcomeDays still counts them. An unknown id is ErrNotFound.
func (s *Store) CardRequests(ctx context.Context, id string, limit, scan int) ([]CardRequest, error) {
	_ = s.FlushRecords() // a failure stays queued for Close to report
	var rowid int64
	if err := s.db.QueryRowContext(ctx, `SELECT rowid FROM cards WHERE id = ?`, id).Scan(&rowid); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("card %s: %w", id, ErrNotFound)
		}
		return nil, fmt.Errorf("read requests of %s: %w", id, err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT request_id, created_at, cards FROM injection_requests ORDER BY seq DESC LIMIT ?`, scan)
	if err != nil {
		return nil, fmt.Errorf("read requests of %s: %w", id, err)
	}
	defer rows.Close()
	var out []CardRequest
	for rows.Next() && len(out) < limit {
		var r CardRequest
		var v any
		if err := rows.Scan(&r.RequestID, &r.CreatedAt, &v); err != nil {
			return nil, fmt.Errorf("read requests of %s: %w", id, err)
		}
		byRow, named, err := decodeRequest(v)
		if err != nil {
			// A damaged record says nothing about this card; the
			// telemetry readers that must see every record report it.
			continue
		}
		for _, o := range Outcomes {
			if slices.Contains(byRow[o], rowid) || slices.Contains(named[o], id) {
				r.Outcome = o
				out = append(out, r)
				break
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read requests of %s: %w", id, err)
	}
	return out, nil
}
