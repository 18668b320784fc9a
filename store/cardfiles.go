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

// CardFile is one row of card_files: what the last sync saw of a card's
// file, by git blob id.
type CardFile struct {
	CardID   string `json:"card_id"`
	AnchorID string `json:"anchor_id"`
	// Blob is the git blob id of the file palace last wrote or imported;
	// "" for a card shared but not yet written.
	Blob string `json:"blob"`
	// Base is the blob the checkout's HEAD held at the last sync, "" when
	// it held none: a HEAD blob other than Base and Blob is a change
	// someone committed since.
	Base string `json:"base"`
	// EventSeq is the card's last event seq when the file was written or
	// read: a higher seq now means the card changed in this palace since.
	EventSeq int `json:"event_seq"`
	// Held says why the file's claim was not accepted (the card keeps its
	// status here, or stays a candidate); "" when nothing is held.
	Held     string `json:"held,omitempty"`
	SyncedAt string `json:"synced_at"`
}

// cardFileCols are the columns of card_files, in CardFile's order.
const cardFileCols = `card_id, anchor_id, blob, base, event_seq, held, synced_at`

// SyncRow is a card of one anchor that sync looks at: every card whose
// status is in the statuses asked for, and every card with a file row.
type SyncRow struct {
	CardID   string
	Status   domain.Status
	EventSeq int
	// File is the card's card_files row; nil when it has none.
	File *CardFile
}

// SyncRows lists the cards of anchorID that are in one of statuses or
// already have a file, with their last event seq, ordered by id.
func (s *Store) SyncRows(ctx context.Context, anchorID string, statuses []domain.Status) ([]SyncRow, error) {
	args := append([]any{anchorID}, strArgs(statuses)...)
	var out []SyncRow
	err := queryEach(ctx, s.db, `SELECT c.id, c.status,
		COALESCE((SELECT max(seq) FROM card_events e WHERE e.card_id = c.id), 0),
		f.card_id IS NOT NULL, COALESCE(f.blob,''), COALESCE(f.base,''), COALESCE(f.event_seq,0),
		COALESCE(f.held,''), COALESCE(f.synced_at,'')
		FROM cards c LEFT JOIN card_files f ON f.card_id = c.id
		WHERE c.anchor_id = ? AND (c.status IN (`+placeholders(len(statuses))+`) OR f.card_id IS NOT NULL)
		ORDER BY c.id`, args, func(rows *sql.Rows) error {
		var r SyncRow
		var has bool
		var f CardFile
		if err := rows.Scan(&r.CardID, (*string)(&r.Status), &r.EventSeq, &has, &f.Blob, &f.Base, &f.EventSeq,
			&f.Held, &f.SyncedAt); err != nil {
			return err
		}
		if has {
			f.CardID, f.AnchorID = r.CardID, anchorID
			r.File = &f
		}
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list cards to sync: %w", err)
	}
	return out, nil
}

// PutCardFile inserts or replaces the file row of f.CardID.
func (tx *Tx) PutCardFile(ctx context.Context, f CardFile) error {
	if _, err := tx.exec(ctx, `INSERT INTO card_files(`+cardFileCols+`) VALUES (?,?,?,?,?,?,?)`+cardFileUpsert,
		f.CardID, f.AnchorID, f.Blob, f.Base, f.EventSeq, f.Held, f.SyncedAt); err != nil {
		return fmt.Errorf("record the file of %s: %w", f.CardID, err)
	}
	return nil
}

const cardFileUpsert = ` ON CONFLICT(card_id) DO UPDATE SET anchor_id = excluded.anchor_id, blob = excluded.blob,
	base = excluded.base, event_seq = excluded.event_seq, held = excluded.held, synced_at = excluded.synced_at`

// LastEventSeq is the seq of the card's last event, 0 without events.
func (tx *Tx) LastEventSeq(ctx context.Context, cardID string) (int, error) {
	return count(ctx, tx.tx, "last event of "+cardID, `SELECT COALESCE(max(seq), 0) FROM card_events WHERE card_id = ?`, cardID)
}

// HeldCardFiles lists the file rows whose claim of authority is held back,
// by card id.
func (s *Store) HeldCardFiles(ctx context.Context) ([]CardFile, error) {
	return s.cardFiles(ctx, "list held card files", `held != ''`)
}

// CardFiles lists the file rows of anchorID, by card id.
func (s *Store) CardFiles(ctx context.Context, anchorID string) ([]CardFile, error) {
	return s.cardFiles(ctx, "list card files", `anchor_id = ?`, anchorID)
}

func (s *Store) cardFiles(ctx context.Context, what, where string, args ...any) ([]CardFile, error) {
	var out []CardFile
	err := queryEach(ctx, s.db, `SELECT `+cardFileCols+` FROM card_files WHERE `+where+` ORDER BY card_id`, args, func(rows *sql.Rows) error {
		var f CardFile
		err := rows.Scan(&f.CardID, &f.AnchorID, &f.Blob, &f.Base, &f.EventSeq, &f.Held, &f.SyncedAt)
		out = append(out, f)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// LastLifecycleEvents returns, per card id, the card's last event that is
// not a bare link: what a card file shows as its last lifecycle event.
func (s *Store) LastLifecycleEvents(ctx context.Context, ids []string) (map[string]domain.Event, error) {
	out := make(map[string]domain.Event, len(ids))
	for chunk := range slices.Chunk(ids, 500) {
		if err := queryEvents(ctx, s.db, "read last events", `SELECT `+eventCols+` FROM card_events e WHERE e.card_id IN (`+placeholders(len(chunk))+`) AND e.seq =
			(SELECT max(seq) FROM card_events x WHERE x.card_id = e.card_id AND x.type != 'linked')`, anySlice(chunk), func(e domain.Event) { out[e.CardID] = e }); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// queryEvents runs query, which selects eventCols, and calls fn for each
// event. A failed query is wrapped with what.
func queryEvents(ctx context.Context, q querier, what, query string, args []any, fn func(domain.Event)) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	for rows.Next() {
		var e domain.Event
		var decision, data string
		if err := rows.Scan(&e.ID, &e.CardID, &e.Seq, (*string)(&e.Type), (*string)(&e.FromStatus), (*string)(&e.ToStatus), &e.Reason, &e.Actor,
			(*string)(&e.ActorType), &e.Policy, &e.PolicyHash, &decision, (*string)(&e.DecidedBy), &data, &e.CreatedAt); err != nil {
			return fmt.Errorf("scan event: %w", err)
		}
		if decision != "null" {
			e.Decision = json.RawMessage(decision)
		}
		if data != "{}" {
			e.Data = json.RawMessage(data)
		}
		fn(e)
	}
	return rows.Err()
}

// CardAnchor is where a card lives and its status.
type CardAnchor struct {
	AnchorID string
	Status   domain.Status
}

// CardAnchors returns the anchor and status of each of ids that exists.
func (s *Store) CardAnchors(ctx context.Context, ids []string) (map[string]CardAnchor, error) {
	out := map[string]CardAnchor{}
	for chunk := range slices.Chunk(ids, 500) {
		err := queryEach(ctx, s.db, `SELECT id, anchor_id, status FROM cards WHERE id IN (`+placeholders(len(chunk))+`)`, anySlice(chunk), func(rows *sql.Rows) error {
			var id string
			var a CardAnchor
			if err := rows.Scan(&id, &a.AnchorID, (*string)(&a.Status)); err != nil {
				return err
			}
			out[id] = a
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read card anchors: %w", err)
		}
	}
	return out, nil
}

// EventMark is the rowid of the newest card event (0 without events): it
// grows with every lifecycle change anywhere in the palace.
func (s *Store) EventMark(ctx context.Context) (int64, error) {
	var n int64
	if err := s.db.QueryRowContext(ctx, `SELECT COALESCE(max(rowid), 0) FROM card_events`).Scan(&n); err != nil {
		return 0, fmt.Errorf("read the newest card event: %w", err)
	}
	return n, nil
}

// SyncMark is the event mark recorded by the last sync of anchorID that
// left nothing pending; ok is false when there is none.
func (s *Store) SyncMark(ctx context.Context, anchorID string) (mark int64, ok bool, err error) {
	err = s.db.QueryRowContext(ctx, `SELECT event_rowid FROM card_sync_marks WHERE anchor_id = ?`, anchorID).Scan(&mark)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("read the sync mark of %s: %w", anchorID, err)
	}
	return mark, true, nil
}

// SetSyncMark records mark for anchorID; a negative mark removes it.
func (s *Store) SetSyncMark(ctx context.Context, anchorID string, mark int64) error {
	var err error
	if mark < 0 {
		_, err = s.db.ExecContext(ctx, `DELETE FROM card_sync_marks WHERE anchor_id = ?`, anchorID)
	} else {
		_, err = s.db.ExecContext(ctx, `INSERT INTO card_sync_marks(anchor_id, event_rowid) VALUES (?, ?)
			ON CONFLICT(anchor_id) DO UPDATE SET event_rowid = excluded.event_rowid`, anchorID, mark)
	}
	if err != nil {
		return fmt.Errorf("record the sync mark of %s: %w", anchorID, err)
	}
	return nil
}
