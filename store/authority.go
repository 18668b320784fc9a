package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/palacehq/palace/domain"
)

// CardWrite is one change to a card — its row, its status, its links, its
// contests — with the event that records it. WriteCards is the only way
// palace changes the cards, card_links and card_contests tables.
type CardWrite struct {
	// Insert is a new card row; its id must be Event.CardID.
	Insert *domain.Card
	// Update replaces the card's governed fields: statement, content, tier,
	// domain, field, scope, trigger, persistence, render preference, dates
	// and origin. Identity, anchor, status and creation stay.
	Update *domain.Card
	// Move changes the card's status. From is what the writer read: the
	// write fails with ErrConflict when the card is no longer in it.
	Move *StatusMove
	// Attrs changes the governed attributes an audit action may change.
	Attrs *CardAttrs
	// PublishedTo stamps the card as published to that copy; it fails with
	// ErrConflict when the card was published already.
	PublishedTo string
	// Links are links of the card to add; a link that exists already is
	// left as it is.
	Links []domain.Link
	// Contests are contests to open on the card.
	Contests []Contest
	// Close closes every open contest of the card with this resolution.
	Close string
	// Supersedes, with Insert, records that the new card replaces this
	// existing card once it is authoritative.
	Supersedes string
	// Event records the write. Required: its CardID, Type, Actor, ActorType
	// and DecidedBy, and for a gate decision the policy, its hash and the
	// decision (which must allow). The store assigns its Seq.
	Event domain.Event
}

// StatusMove is a change of a card's status.
type StatusMove struct {
	From, To domain.Status
}

// Written is what one CardWrite did.
type Written struct {
	// Event is the stored event, Seq assigned.
	Event domain.Event
	// Closed counts the contests Close closed.
	Closed int
}

// ErrUndecided is returned by WriteCards for a write whose event does not
// carry a decision that may make it: a change of a card's authority needs
// the gate's allow or a person's decision.
var ErrUndecided = errors.New("an authority change needs a decision of the gate or of a person")

// WriteCards applies ws in order, in this transaction, and returns what
// each did. Every write carries the event that records it and says who
// decided it (domain.DecidedBy). A write that bears on authority — a card
// inserted or moved into or out of promoted/canonical, an authoritative
// card's fields or attributes changed, its contests closed, a publication
// stamped — is refused with ErrUndecided unless the gate allowed it (the
// event names the policy, its hash and an allowing decision) or a person
// decided it in human mode. Nothing is written when any write is refused.
func (tx *Tx) WriteCards(ctx context.Context, ws []CardWrite) ([]Written, error) {
	if len(ws) == 0 {
		return nil, nil
	}
	var existing []string
	for _, w := range ws {
		if w.Insert == nil {
			existing = append(existing, w.Event.CardID)
		}
	}
	cur, err := tx.cardStatuses(ctx, existing)
	if err != nil {
		return nil, err
	}
	for i := range ws {
		if err := checkWrite(&ws[i], cur); err != nil {
			return nil, err
		}
		if w := &ws[i]; w.Insert != nil {
			cur[w.Insert.ID] = w.Insert.Status
		} else if w.Move != nil {
			cur[w.Event.CardID] = w.Move.To
		}
	}
	var inserts []domain.Card
	var links []domain.Link
	for _, w := range ws {
		if w.Insert != nil {
			inserts = append(inserts, *w.Insert)
		}
		links = append(links, w.Links...)
	}
	if err := tx.insertCards(ctx, inserts); err != nil {
		return nil, err
	}
	out := make([]Written, len(ws))
	for i, w := range ws {
		id := w.Event.CardID
		if w.Update != nil {
			if err := tx.updateCard(ctx, *w.Update, w.Event.CreatedAt); err != nil {
				return nil, err
			}
		}
		if w.Move != nil {
			if err := tx.setCardStatus(ctx, id, w.Move.From, w.Move.To, w.Event.CreatedAt); err != nil {
				return nil, err
			}
		}
		if w.Attrs != nil {
			if err := tx.updateCardAttrs(ctx, id, *w.Attrs, w.Event.CreatedAt); err != nil {
				return nil, err
			}
		}
		if w.PublishedTo != "" {
			if err := tx.setPublishedTo(ctx, id, w.PublishedTo, w.Event.CreatedAt); err != nil {
				return nil, err
			}
		}
		if w.Close != "" {
			if out[i].Closed, err = tx.closeContests(ctx, id, w.Close, w.Event.CreatedAt); err != nil {
				return nil, err
			}
		}
	}
	if err := tx.insertLinks(ctx, links); err != nil {
		return nil, err
	}
	events := make([]domain.Event, len(ws))
	for i, w := range ws {
		if w.Supersedes != "" {
			if _, err := tx.exec(ctx, `INSERT INTO card_supersessions(card_id, supersedes, created_at) VALUES (?, ?, ?)`,
				w.Event.CardID, w.Supersedes, w.Event.CreatedAt); err != nil {
				return nil, fmt.Errorf("write card %s: record that it supersedes %s: %w", w.Event.CardID, w.Supersedes, err)
			}
		}
		for _, c := range w.Contests {
			if err := tx.insertContest(ctx, c); err != nil {
				return nil, err
			}
		}
		events[i] = w.Event
	}
	stored, err := tx.appendEvents(ctx, events)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Event = stored[i]
	}
	return out, nil
}

// checkWrite refuses a write that is malformed or bears on authority
// without a decision that may make it. cur holds the status of every card
// the batch does not insert.
func checkWrite(w *CardWrite, cur map[string]domain.Status) error {
	e := &w.Event
	id := e.CardID
	switch {
	case id == "" || e.Type == "" || e.Actor == "" || e.ActorType == "":
		return fmt.Errorf("write card %q: the event needs a card id, a type and who acts", id)
	case w.Insert != nil && w.Insert.ID != id:
		return fmt.Errorf("write card %s: the event names card %s", w.Insert.ID, id)
	case w.Supersedes != "" && w.Insert == nil:
		return fmt.Errorf("write card %s: only a new card supersedes another", id)
	case w.Update != nil && w.Update.ID != id:
		return fmt.Errorf("write card %s: the update names card %s", id, w.Update.ID)
	case !slices.Contains(domain.Deciders, e.DecidedBy):
		return fmt.Errorf("write card %s: %w (the event says it was decided by %q)", id, ErrUndecided, e.DecidedBy)
	}
	for _, l := range w.Links {
		if l.CardID != id {
			return fmt.Errorf("write card %s: a link names card %s", id, l.CardID)
		}
	}
	for _, c := range w.Contests {
		if c.CardID != id {
			return fmt.Errorf("write card %s: a contest names card %s", id, c.CardID)
		}
	}
	status, ok := cur[id]
	switch {
	case w.Insert != nil && ok:
		return fmt.Errorf("write card %s: it exists already", id)
	case w.Insert != nil:
		status = w.Insert.Status
	case !ok:
		return fmt.Errorf("write card %s: %w", id, ErrNotFound)
	}
	bears := status.Authoritative() || w.Close != "" || w.PublishedTo != ""
	if w.Move != nil {
		bears = bears || w.Move.From.Authoritative() || w.Move.To.Authoritative()
	}
	if w.Insert == nil && w.Update == nil && w.Move == nil && w.Attrs == nil && w.Close == "" && w.PublishedTo == "" {
		// Links and contests alone: a rule may add evidence or open a
		// contest (which takes a card out of the inline lanes, never in).
		bears = false
	}
	if !bears {
		return nil
	}
	switch e.DecidedBy {
	case domain.DecidedByHuman:
		if e.ActorType != domain.ActorHuman {
			return fmt.Errorf("write card %s: %w (a person's decision is taken in human mode)", id, ErrUndecided)
		}
		return nil
	case domain.DecidedByGate:
		var d struct {
			Allow bool `json:"allow"`
		}
		if e.Policy == "" || e.PolicyHash == "" || json.Unmarshal(e.Decision, &d) != nil || !d.Allow {
			return fmt.Errorf("write card %s: %w (the event carries no allowing gate decision)", id, ErrUndecided)
		}
		return nil
	}
	return fmt.Errorf("write card %s: %w (a rule alone decided it)", id, ErrUndecided)
}

// cardStatuses reads the status of each of ids that exists.
func (tx *Tx) cardStatuses(ctx context.Context, ids []string) (map[string]domain.Status, error) {
	out := make(map[string]domain.Status, len(ids))
	for chunk := range slices.Chunk(ids, 500) {
		err := queryEach(ctx, tx.tx, `SELECT id, status FROM cards WHERE id IN (`+placeholders(len(chunk))+`)`, anySlice(chunk), func(rows *sql.Rows) error {
			var id string
			var st domain.Status
			if err := rows.Scan(&id, (*string)(&st)); err != nil {
				return err
			}
			out[id] = st
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read card statuses: %w", err)
		}
	}
	return out, nil
}

// Supersession is one card replacing another (CardWrite.Supersedes).
type Supersession struct {
	// Supersedes is the card this one replaces, "" when none.
	Supersedes string `json:"supersedes,omitempty"`
	// SupersededBy are the cards that replace this one, oldest first.
	SupersededBy []string `json:"superseded_by,omitempty"`
}

// Supersessions reads, for each of ids that has any, the card it
// supersedes and the cards that supersede it.
func (tx *Tx) Supersessions(ctx context.Context, ids []string) (map[string]Supersession, error) {
	return supersessions(ctx, tx.tx, ids)
}

// Supersessions is Tx.Supersessions outside a transaction.
func (s *Store) Supersessions(ctx context.Context, ids []string) (map[string]Supersession, error) {
	return supersessions(ctx, s.db, ids)
}

func supersessions(ctx context.Context, q querier, ids []string) (map[string]Supersession, error) {
	out := map[string]Supersession{}
	for chunk := range slices.Chunk(ids, 400) {
		args := anySlice(chunk)
		in := map[string]bool{}
		for _, id := range chunk {
			in[id] = true
		}
		err := queryEach(ctx, q, `SELECT card_id, supersedes FROM card_supersessions
			WHERE card_id IN (`+placeholders(len(chunk))+`) OR supersedes IN (`+placeholders(len(chunk))+`) ORDER BY created_at, card_id`, append(args, args...), func(rows *sql.Rows) error {
			var id, old string
			if err := rows.Scan(&id, &old); err != nil {
				return err
			}
			if in[id] {
				s := out[id]
				s.Supersedes = old
				out[id] = s
			}
			if in[old] {
				s := out[old]
				s.SupersededBy = append(s.SupersededBy, id)
				out[old] = s
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read supersessions: %w", err)
		}
	}
	return out, nil
}
