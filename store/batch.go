package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/palacehq/palace/domain"
)

// Batch writes: up to batchArgs/cols rows per statement, prepared once per
// transaction and size. A statement that fails on a constraint is undone
// alone, and its rows are written one at a time to name the row at fault
// with the error a single-row write gives.

// batchArgs bounds the parameters of one multi-row statement (SQLite's
// historical limit is 999).
const batchArgs = 999

// insertRows writes n rows through `head VALUES (?,…),(?,…) tail`, cols
// parameters per row: args appends row i's values. single writes row i
// alone, for the error of a failed statement.
func (tx *Tx) insertRows(ctx context.Context, head, tail string, cols, n int, args func(dst []any, i int) []any, single func(i int) error) error {
	per := max(1, batchArgs/cols)
	vals := make([]any, 0, per*cols)
	for start := 0; start < n; start += per {
		end := min(start+per, n)
		vals = vals[:0]
		for i := start; i < end; i++ {
			vals = args(vals, i)
		}
		if _, err := tx.exec(ctx, multiRow(head, tail, cols, end-start), vals...); err != nil {
			if !IsConstraint(err) {
				return err
			}
			for i := start; i < end; i++ {
				if err := single(i); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// multiRow is the text of an INSERT of rows rows.
func multiRow(head, tail string, cols, rows int) string {
	one := "(" + strings.TrimSuffix(strings.Repeat("?,", cols), ",") + ")"
	var b strings.Builder
	b.Grow(len(head) + len(tail) + rows*(len(one)+1) + 8)
	b.WriteString(head)
	b.WriteString(" VALUES ")
	for i := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(one)
	}
	b.WriteString(tail)
	return b.String()
}

// InsertEvidenceRows appends evidence rows, as InsertEvidence does one.
func (tx *Tx) InsertEvidenceRows(ctx context.Context, rows []domain.Evidence) error {
	if len(rows) == 0 {
		return nil
	}
	tags := make([]string, len(rows))
	for i, e := range rows {
		tags[i] = string(appendList(nil, e.Tags))
	}
	if err := tx.markUnindexed(ctx, "evidence", &tx.unindexed); err != nil {
		return err
	}
	return tx.insertRows(ctx, `INSERT INTO evidence(`+evidenceCols+`)`, "", 12, len(rows),
		func(dst []any, i int) []any {
			e := &rows[i]
			return append(dst, e.ID, e.Content, e.Domain, e.Field, e.Provenance, e.SourceRef, tags[i], e.AnchorID,
				e.ContentSHA256, e.Actor, e.ActorType, e.CreatedAt)
		},
		func(i int) error { return tx.InsertEvidence(ctx, rows[i]) })
}

// Duplicate is one row of evidence_duplicates: EvidenceID repeats Original.
type Duplicate struct {
	EvidenceID, Original, Cause, CreatedAt string
}

// MarkDuplicates records duplicates, as MarkDuplicate does one.
func (tx *Tx) MarkDuplicates(ctx context.Context, ds []Duplicate) error {
	return tx.insertRows(ctx, `INSERT INTO evidence_duplicates(evidence_id, original_id, cause, created_at)`, "", 4, len(ds),
		func(dst []any, i int) []any {
			d := &ds[i]
			return append(dst, d.EvidenceID, d.Original, d.Cause, d.CreatedAt)
		},
		func(i int) error {
			d := ds[i]
			return tx.MarkDuplicate(ctx, d.EvidenceID, d.Original, d.Cause, d.CreatedAt)
		})
}

// insertCards adds cards, as insertCard does one.
func (tx *Tx) insertCards(ctx context.Context, cs []domain.Card) error {
	type enc struct{ scope, trig string }
	encs := make([]enc, len(cs))
	for i, c := range cs {
		scope, trig := encodeScopeTrigger(c.Scope, c.Trigger)
		encs[i] = enc{scope, trig}
	}
	if err := tx.markUnindexed(ctx, "cards", &tx.cardsUnindexed); err != nil {
		return err
	}
	return tx.insertRows(ctx, `INSERT INTO cards(id, statement, statement_norm, content, tier, status, domain, field,
		anchor_id, scope, trigger, persistence, render_pref, review_after, expires_at, origin_card, published_to,
		created_by, created_at, updated_at)`, "", 20, len(cs),
		func(dst []any, i int) []any {
			c := &cs[i]
			return append(dst, c.ID, c.Statement, c.StatementNorm, c.Content, c.Tier, c.Status, c.Domain, c.Field, c.AnchorID,
				encs[i].scope, encs[i].trig, c.Persistence, c.RenderPref, nullable(c.ReviewAfter), nullable(c.ExpiresAt),
				nullable(c.OriginCard), nullable(c.PublishedTo), c.CreatedBy, c.CreatedAt, c.UpdatedAt)
		},
		func(i int) error { return tx.insertCard(ctx, cs[i]) })
}

// insertLinks adds links; a link that exists already is left as it is.
func (tx *Tx) insertLinks(ctx context.Context, ls []domain.Link) error {
	return tx.insertRows(ctx, `INSERT INTO card_links(card_id, evidence_id, role, note, created_at)`,
		` ON CONFLICT(card_id, evidence_id, role) DO NOTHING`, 5, len(ls),
		func(dst []any, i int) []any {
			l := &ls[i]
			return append(dst, l.CardID, l.EvidenceID, l.Role, l.Note, l.CreatedAt)
		},
		func(i int) error { _, err := tx.insertLink(ctx, ls[i]); return err })
}

// appendEvents appends es, each as its card's next event (Seq assigned in
// order), and returns the stored rows.
func (tx *Tx) appendEvents(ctx context.Context, es []domain.Event) ([]domain.Event, error) {
	if len(es) == 0 {
		return nil, nil
	}
	ids := make([]string, 0, len(es))
	seen := make(map[string]bool, len(es))
	for _, e := range es {
		if !seen[e.CardID] {
			seen[e.CardID] = true
			ids = append(ids, e.CardID)
		}
	}
	last, err := tx.lastEventSeqs(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]domain.Event, len(es))
	for i, e := range es {
		last[e.CardID]++
		e.Seq = last[e.CardID]
		out[i] = e
	}
	err = tx.insertRows(ctx, `INSERT INTO card_events(id, card_id, seq, type, from_status, to_status, reason,
		actor, actor_type, policy, policy_hash, decision, decided_by, data, created_at)`, "", 15, len(out),
		func(dst []any, i int) []any {
			e := &out[i]
			decision, data := eventJSON(*e)
			return append(dst, e.ID, e.CardID, e.Seq, e.Type, e.FromStatus, e.ToStatus, e.Reason, e.Actor, e.ActorType,
				e.Policy, e.PolicyHash, decision, e.DecidedBy, data, e.CreatedAt)
		},
		func(i int) error { _, err := tx.appendEvent(ctx, out[i]); return err })
	if err != nil {
		return nil, err
	}
	return out, nil
}

// lastEventSeqs reads the last event seq of each card (absent: none yet).
func (tx *Tx) lastEventSeqs(ctx context.Context, ids []string) (map[string]int, error) {
	out := make(map[string]int, len(ids))
	for chunk := range slices.Chunk(ids, 500) {
		err := queryEach(ctx, tx.tx, `SELECT card_id, max(seq) FROM card_events WHERE card_id IN (`+placeholders(len(chunk))+`) GROUP BY card_id`, anySlice(chunk), func(rows *sql.Rows) error {
			var id string
			var seq int
			if err := rows.Scan(&id, &seq); err != nil {
				return err
			}
			out[id] = seq
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("next event seqs: %w", err)
		}
	}
	return out, nil
}

// PutCardFiles inserts or replaces file rows, as PutCardFile does one. A
// card named twice keeps its last row.
func (tx *Tx) PutCardFiles(ctx context.Context, fs []CardFile) error {
	// One statement may not update a row it inserted.
	last := make(map[string]int, len(fs))
	for i, f := range fs {
		last[f.CardID] = i
	}
	if len(last) != len(fs) {
		kept := make([]CardFile, 0, len(last))
		for i, f := range fs {
			if last[f.CardID] == i {
				kept = append(kept, f)
			}
		}
		fs = kept
	}
	return tx.insertRows(ctx, `INSERT INTO card_files(`+cardFileCols+`)`, cardFileUpsert, 7, len(fs),
		func(dst []any, i int) []any {
			f := &fs[i]
			return append(dst, f.CardID, f.AnchorID, f.Blob, f.Base, f.EventSeq, f.Held, f.SyncedAt)
		},
		func(i int) error { return tx.PutCardFile(ctx, fs[i]) })
}
