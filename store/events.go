package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/palacehq/palace/domain"
)

// AppendEvent appends e as the card's next event (Seq is assigned here) and
// returns the stored row.
func (tx *Tx) AppendEvent(ctx context.Context, e domain.Event) (domain.Event, error) {
	if err := tx.tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) + 1 FROM card_events WHERE card_id = ?`, e.CardID).Scan(&e.Seq); err != nil {
		return domain.Event{}, fmt.Errorf("next event seq for %s: %w", e.CardID, err)
	}
	decision, data := string(e.Decision), string(e.Data)
	if decision == "" {
		decision = "null"
	}
	if data == "" {
		data = "{}"
	}
	if _, err := tx.exec(ctx, `INSERT INTO card_events(id, card_id, seq, type, from_status, to_status, reason,
		actor, actor_type, policy, policy_hash, decision, data, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		e.ID, e.CardID, e.Seq, e.Type, e.FromStatus, e.ToStatus, e.Reason, e.Actor, e.ActorType,
		e.Policy, e.PolicyHash, decision, data, e.CreatedAt); err != nil {
		return domain.Event{}, fmt.Errorf("append %s event to %s: %w", e.Type, e.CardID, err)
	}
	return e, nil
}

// Events returns a card's events in order.
func (s *Store) Events(ctx context.Context, cardID string) ([]domain.Event, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, card_id, seq, type, from_status, to_status, reason, actor,
		actor_type, policy, policy_hash, decision, data, created_at FROM card_events WHERE card_id = ? ORDER BY seq`, cardID)
	if err != nil {
		return nil, fmt.Errorf("read events of %s: %w", cardID, err)
	}
	defer rows.Close()
	var out []domain.Event
	for rows.Next() {
		var e domain.Event
		var decision, data string
		if err := rows.Scan(&e.ID, &e.CardID, &e.Seq, (*string)(&e.Type), (*string)(&e.FromStatus), (*string)(&e.ToStatus), &e.Reason, &e.Actor,
			(*string)(&e.ActorType), &e.Policy, &e.PolicyHash, &decision, &data, &e.CreatedAt); err != nil {
			return nil, fmt.Errorf("scan event: %w", err)
		}
		if decision != "null" {
			e.Decision = json.RawMessage(decision)
		}
		if data != "{}" {
			e.Data = json.RawMessage(data)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// CountEvents counts all card events.
func (s *Store) CountEvents(ctx context.Context) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM card_events`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count events: %w", err)
	}
	return n, nil
}
