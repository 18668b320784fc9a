package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/palacehq/palace/domain"
)

// AdoptionPrefix is the id prefix of adoption events.
const AdoptionPrefix = "ad_"

// AdoptionEvent is one append-only adoption signal: what an agent or a
// person said happened with a card, or, for a miss, with a request.
type AdoptionEvent struct {
	ID     string `json:"id"`
	Signal string `json:"signal"`
	// CardID is empty only for a miss that names no card.
	CardID    string `json:"card_id,omitempty"`
	RequestID string `json:"request_id,omitempty"`
	// RequestTerms is the signature of the request the signal is about
	// (space-separated terms), "" when it names none.
	RequestTerms string           `json:"request_terms,omitempty"`
	Query        string           `json:"query,omitempty"`
	Field        string           `json:"field,omitempty"`
	EvidenceID   string           `json:"evidence_id,omitempty"`
	Note         string           `json:"note,omitempty"`
	Actor        string           `json:"actor"`
	ActorType    domain.ActorType `json:"actor_type"`
	PolicyHash   string           `json:"policy_hash,omitempty"`
	CreatedAt    string           `json:"created_at"`
}

const adoptionCols = `id, signal, card_id, request_id, request_terms, query, field, evidence_id, note, actor, actor_type, policy_hash, created_at`

// InsertAdoption appends one adoption event. An unknown card or evidence id
// is a constraint error (nothing is written).
func (s *Store) InsertAdoption(ctx context.Context, e AdoptionEvent) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO adoption_events(`+adoptionCols+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		e.ID, e.Signal, nullable(e.CardID), e.RequestID, e.RequestTerms, e.Query, e.Field, nullable(e.EvidenceID),
		e.Note, e.Actor, e.ActorType, e.PolicyHash, e.CreatedAt)
	if err != nil {
		return fmt.Errorf("insert adoption event %s: %w", e.ID, err)
	}
	return nil
}

// CardSignal is the part of an adoption event that lanes read, with what
// the counting rule needs (who signalled, about which request, when).
type CardSignal struct {
	ID           string
	CardID       string
	Signal       string
	RequestID    string
	RequestTerms string
	Actor        string
	ActorType    domain.ActorType
	CreatedAt    string
}

// CardSignal is the part of e that lanes read.
func (e AdoptionEvent) CardSignal() CardSignal {
	return CardSignal{ID: e.ID, CardID: e.CardID, Signal: e.Signal, RequestID: e.RequestID, RequestTerms: e.RequestTerms,
		Actor: e.Actor, ActorType: e.ActorType, CreatedAt: e.CreatedAt}
}

// CardSignals reads the signals on these cards since a time (inclusive),
// oldest first (by time, then id).
func (s *Store) CardSignals(ctx context.Context, ids []string, since string) ([]CardSignal, error) {
	var out []CardSignal
	for chunk := range slices.Chunk(ids, 500) {
		args := append(anySlice(chunk), since)
		err := queryEach(ctx, s.db, `SELECT id, card_id, signal, request_id, request_terms, actor, actor_type, created_at FROM adoption_events
			WHERE card_id IN (`+placeholders(len(chunk))+`) AND created_at >= ? ORDER BY created_at, id`, args, func(rows *sql.Rows) error {
			var c CardSignal
			err := rows.Scan(&c.ID, &c.CardID, &c.Signal, &c.RequestID, &c.RequestTerms, &c.Actor, (*string)(&c.ActorType), &c.CreatedAt)
			out = append(out, c)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("read adoption signals: %w", err)
		}
	}
	return out, nil
}

// AdoptionFilter selects adoption events. Empty fields match all.
type AdoptionFilter struct {
	CardID string
	// CardIDs keeps the signals on any of these cards (at most 500).
	CardIDs []string
	// Since is an inclusive lower bound on created_at.
	Since string
	// Signal keeps one signal only.
	Signal string
	Limit  int // 0 = no limit
}

// ListAdoption returns matching events, oldest first.
func (s *Store) ListAdoption(ctx context.Context, f AdoptionFilter) ([]AdoptionEvent, error) {
	var where []string
	var args []any
	if f.CardID != "" {
		where, args = append(where, "card_id = ?"), append(args, f.CardID)
	}
	if len(f.CardIDs) > 0 {
		where, args = append(where, "card_id IN ("+placeholders(len(f.CardIDs))+")"), append(args, anySlice(f.CardIDs)...)
	}
	if f.Since != "" {
		where, args = append(where, "created_at >= ?"), append(args, f.Since)
	}
	if f.Signal != "" {
		where, args = append(where, "signal = ?"), append(args, f.Signal)
	}
	q := `SELECT ` + adoptionCols + ` FROM adoption_events`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY created_at, id"
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	var out []AdoptionEvent
	err := queryEach(ctx, s.db, q, args, func(rows *sql.Rows) error {
		var e AdoptionEvent
		var card, ev sql.NullString
		if err := rows.Scan(&e.ID, &e.Signal, &card, &e.RequestID, &e.RequestTerms, &e.Query, &e.Field, &ev,
			&e.Note, &e.Actor, (*string)(&e.ActorType), &e.PolicyHash, &e.CreatedAt); err != nil {
			return err
		}
		e.CardID, e.EvidenceID = card.String, ev.String
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list adoption events: %w", err)
	}
	return out, nil
}

// RequestTerms is a context request's signature as it was recorded.
type RequestTerms struct {
	RequestID string
	Query     string
	Terms     string
	CreatedAt string
}

// recordRequestTerms keeps a request's signature (the first record of an
// id wins: a request id names one request). RecordRequest writes it with
// the request's telemetry.
func (tx *Tx) recordRequestTerms(ctx context.Context, r RequestTerms) error {
	if _, err := tx.tx.ExecContext(ctx, `INSERT OR IGNORE INTO request_terms(request_id, query, terms, created_at) VALUES (?,?,?,?)`,
		r.RequestID, r.Query, r.Terms, r.CreatedAt); err != nil {
		return fmt.Errorf("record request terms of %s: %w", r.RequestID, err)
	}
	return nil
}

// RequestTermsOf reads a request's signature; ErrNotFound if it was never
// recorded (a dry run) or was pruned.
func (s *Store) RequestTermsOf(ctx context.Context, requestID string) (RequestTerms, error) {
	_ = s.FlushRecords() // a failure stays queued for Close to report
	r := RequestTerms{RequestID: requestID}
	err := s.db.QueryRowContext(ctx, `SELECT query, terms, created_at FROM request_terms WHERE request_id = ?`, requestID).
		Scan(&r.Query, &r.Terms, &r.CreatedAt)
	if err == sql.ErrNoRows {
		return r, fmt.Errorf("request %s: %w", requestID, ErrNotFound)
	}
	if err != nil {
		return r, fmt.Errorf("read request %s: %w", requestID, err)
	}
	return r, nil
}

// pruneRequestTerms drops up to n request signatures older than before.
func (tx *Tx) pruneRequestTerms(ctx context.Context, before string, n int) (int64, error) {
	res, err := tx.tx.ExecContext(ctx, `DELETE FROM request_terms WHERE request_id IN
		(SELECT request_id FROM request_terms WHERE created_at < ? LIMIT ?)`, before, n)
	if err != nil {
		return 0, fmt.Errorf("prune request terms: %w", err)
	}
	return res.RowsAffected()
}
