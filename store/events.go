package store

import (
	"context"
	"fmt"

	"github.com/palacehq/palace/domain"
)

// appendEvent appends e as the card's next event (Seq is assigned here) and
// returns the stored row.
func (tx *Tx) appendEvent(ctx context.Context, e domain.Event) (domain.Event, error) {
	if err := tx.tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) + 1 FROM card_events WHERE card_id = ?`, e.CardID).Scan(&e.Seq); err != nil {
		return domain.Event{}, fmt.Errorf("next event seq for %s: %w", e.CardID, err)
	}
	decision, data := eventJSON(e)
	if _, err := tx.exec(ctx, `INSERT INTO card_events(id, card_id, seq, type, from_status, to_status, reason,
		actor, actor_type, policy, policy_hash, decision, decided_by, data, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		e.ID, e.CardID, e.Seq, e.Type, e.FromStatus, e.ToStatus, e.Reason, e.Actor, e.ActorType,
		e.Policy, e.PolicyHash, decision, e.DecidedBy, data, e.CreatedAt); err != nil {
		return domain.Event{}, fmt.Errorf("append %s event to %s: %w", e.Type, e.CardID, err)
	}
	return e, nil
}

// eventJSON is the decision and data of e as stored: "null" and "{}" when
// empty.
func eventJSON(e domain.Event) (decision, data string) {
	decision, data = string(e.Decision), string(e.Data)
	if decision == "" {
		decision = "null"
	}
	if data == "" {
		data = "{}"
	}
	return decision, data
}

// Events returns a card's events in order.
func (s *Store) Events(ctx context.Context, cardID string) ([]domain.Event, error) {
	var out []domain.Event
	if err := queryEvents(ctx, s.db, "read events of "+cardID, `SELECT `+eventCols+` FROM card_events e WHERE e.card_id = ? ORDER BY e.seq`, []any{cardID},
		func(e domain.Event) { out = append(out, e) }); err != nil {
		return nil, err
	}
	return out, nil
}

// eventCols are the columns scanEvents reads, of card_events aliased e.
const eventCols = `e.id, e.card_id, e.seq, e.type, e.from_status, e.to_status, e.reason, e.actor, e.actor_type,
	e.policy, e.policy_hash, e.decision, e.decided_by, e.data, e.created_at`

// CountEvents counts all card events.
func (s *Store) CountEvents(ctx context.Context) (int, error) {
	return count(ctx, s.db, "count events", `SELECT count(*) FROM card_events`)
}
