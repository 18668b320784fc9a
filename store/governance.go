package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/palacehq/palace/domain"
)

// Duplicate causes (evidence_duplicates.cause).
const (
	DuplicateMigration = "migration"
	DuplicateAllowed   = "allow_duplicate"
)

// OriginalEvidence returns the id of the original row holding content with
// this hash at this anchor (the first one recorded), found false when none.
func (tx *Tx) OriginalEvidence(ctx context.Context, anchorID, sha string) (string, bool, error) {
	var id string
	// Prepared once per transaction: an import asks once per row.
	st, err := tx.stmt(ctx, `SELECT e.id FROM evidence e
		WHERE substr(e.content_sha256, 1, 16) = substr(?1, 1, 16) AND e.content_sha256 = ?1 AND e.anchor_id = ?2
		AND NOT EXISTS (SELECT 1 FROM evidence_duplicates d WHERE d.evidence_id = e.id)
		ORDER BY e.rowid LIMIT 1`)
	if err != nil {
		return "", false, fmt.Errorf("look up evidence by hash: %w", err)
	}
	err = st.QueryRowContext(ctx, sha, anchorID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("look up evidence by hash: %w", err)
	}
	return id, true, nil
}

// MarkDuplicate records that evidence id repeats original.
func (tx *Tx) MarkDuplicate(ctx context.Context, id, original, cause, now string) error {
	if _, err := tx.exec(ctx, `INSERT INTO evidence_duplicates(evidence_id, original_id, cause, created_at) VALUES (?,?,?,?)`,
		id, original, cause, now); err != nil {
		return fmt.Errorf("mark %s a duplicate of %s: %w", id, original, err)
	}
	return nil
}

// DuplicateOf returns the original of evidence id, "" when id is an
// original.
func (s *Store) DuplicateOf(ctx context.Context, id string) (string, error) {
	var orig string
	err := s.db.QueryRowContext(ctx, `SELECT original_id FROM evidence_duplicates WHERE evidence_id = ?`, id).Scan(&orig)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read duplicate of %s: %w", id, err)
	}
	return orig, nil
}

// CountDuplicates counts the rows marked as duplicates, by cause.
func (s *Store) CountDuplicates(ctx context.Context) (map[string]int, error) {
	out := map[string]int{}
	err := queryEach(ctx, s.db, `SELECT cause, count(*) FROM evidence_duplicates GROUP BY cause`, nil, func(rows *sql.Rows) error {
		var c string
		var n int
		if err := rows.Scan(&c, &n); err != nil {
			return err
		}
		out[c] = n
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("count duplicates: %w", err)
	}
	return out, nil
}

// Contest is one open or closed contest of a card: something that
// contradicts it since it became authoritative.
type Contest struct {
	CardID string `json:"card_id"`
	// Kind is counterexample, contradiction, witness_superseded or another
	// word a caller chooses.
	Kind       string `json:"kind"`
	Reason     string `json:"reason"`
	EvidenceID string `json:"evidence_id,omitempty"`
	// SourceRef is the evidence's source_ref, joined in on reads.
	SourceRef string `json:"source_ref,omitempty"`
	// EvidenceAt is when the evidence was recorded, joined in on reads.
	EvidenceAt string           `json:"evidence_at,omitempty"`
	Source     string           `json:"source,omitempty"`
	Actor      string           `json:"actor"`
	ActorType  domain.ActorType `json:"actor_type"`
	CreatedAt  string           `json:"created_at"`
	ResolvedAt string           `json:"resolved_at,omitempty"`
	Resolution string           `json:"resolution,omitempty"`
}

// InsertContest opens a contest.
func (tx *Tx) insertContest(ctx context.Context, c Contest) error {
	if _, err := tx.exec(ctx, `INSERT INTO card_contests(card_id, kind, reason, evidence_id, source, actor, actor_type, created_at)
		VALUES (?,?,?,?,?,?,?,?)`, c.CardID, c.Kind, c.Reason, nullable(c.EvidenceID), c.Source, c.Actor, c.ActorType, c.CreatedAt); err != nil {
		return fmt.Errorf("contest %s: %w", c.CardID, err)
	}
	return nil
}

// CloseContests closes every open contest of a card with resolution and
// returns how many were open.
func (tx *Tx) closeContests(ctx context.Context, cardID, resolution, now string) (int, error) {
	res, err := tx.exec(ctx, `UPDATE card_contests SET resolved_at = ?, resolution = ? WHERE card_id = ? AND resolved_at IS NULL`,
		now, resolution, cardID)
	if err != nil {
		return 0, fmt.Errorf("close contests of %s: %w", cardID, err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

const contestCols = `c.card_id, c.kind, c.reason, COALESCE(c.evidence_id,''), COALESCE(e.source_ref,''), COALESCE(e.created_at,''),
	c.source, c.actor, c.actor_type, c.created_at, COALESCE(c.resolved_at,''), c.resolution`

// OpenContests returns the open contests of these cards (all open contests
// when ids is nil), keyed by card id, oldest first.
func (s *Store) OpenContests(ctx context.Context, ids []string) (map[string][]Contest, error) {
	return openContests(ctx, s.db, ids)
}

// OpenContests is the in-transaction form of Store.OpenContests.
func (tx *Tx) OpenContests(ctx context.Context, ids []string) (map[string][]Contest, error) {
	return openContests(ctx, tx.tx, ids)
}

func openContests(ctx context.Context, q querier, ids []string) (map[string][]Contest, error) {
	out := map[string][]Contest{}
	read := func(where string, args []any) error {
		err := queryEach(ctx, q, `SELECT `+contestCols+` FROM card_contests c LEFT JOIN evidence e ON e.id = c.evidence_id
			WHERE c.resolved_at IS NULL`+where+` ORDER BY c.seq`, args, func(rows *sql.Rows) error {
			var c Contest
			err := rows.Scan(&c.CardID, &c.Kind, &c.Reason, &c.EvidenceID, &c.SourceRef, &c.EvidenceAt,
				&c.Source, &c.Actor, (*string)(&c.ActorType), &c.CreatedAt, &c.ResolvedAt, &c.Resolution)
			out[c.CardID] = append(out[c.CardID], c)
			return err
		})
		if err != nil {
			return fmt.Errorf("read contests: %w", err)
		}
		return nil
	}
	if ids == nil {
		return out, read("", nil)
	}
	for chunk := range slices.Chunk(ids, 500) {
		if err := read(` AND c.card_id IN (`+placeholders(len(chunk))+`)`, anySlice(chunk)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// CopiesOf returns the ids of the cards published from id, transitively
// (the copy of a copy included), nearest first.
func (tx *Tx) CopiesOf(ctx context.Context, id string) ([]string, error) {
	var out []string
	seen := map[string]bool{id: true}
	for cur := id; ; {
		var next sql.NullString
		err := tx.tx.QueryRowContext(ctx, `SELECT published_to FROM cards WHERE id = ?`, cur).Scan(&next)
		if errors.Is(err, sql.ErrNoRows) || !next.Valid || next.String == "" || seen[next.String] {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read copies of %s: %w", id, err)
		}
		seen[next.String] = true
		out = append(out, next.String)
		cur = next.String
	}
}

// OriginalOf returns the original of evidence id: the id itself unless it
// is marked a duplicate.
func (tx *Tx) OriginalOf(ctx context.Context, id string) (string, error) {
	var orig string
	err := tx.tx.QueryRowContext(ctx, `SELECT original_id FROM evidence_duplicates WHERE evidence_id = ?`, id).Scan(&orig)
	if errors.Is(err, sql.ErrNoRows) {
		return id, nil
	}
	if err != nil {
		return "", fmt.Errorf("read original of %s: %w", id, err)
	}
	return orig, nil
}

// OriginalsByHash returns, for the rows whose content hash is one of shas,
// the id of each original keyed by anchor id + "|" + hash: one query per
// 500 hashes instead of one per row of an import.
func (tx *Tx) OriginalsByHash(ctx context.Context, shas []string) (map[string]string, error) {
	return originalsByHash(ctx, tx.tx, shas)
}

// OriginalsByHash is the committed form of Tx.OriginalsByHash.
func (s *Store) OriginalsByHash(ctx context.Context, shas []string) (map[string]string, error) {
	return originalsByHash(ctx, s.db, shas)
}

func originalsByHash(ctx context.Context, q querier, shas []string) (map[string]string, error) {
	out := map[string]string{}
	for chunk := range slices.Chunk(shas, 500) {
		prefixes := make([]any, len(chunk))
		for i, s := range chunk {
			prefixes[i] = s[:min(16, len(s))]
		}
		err := queryEach(ctx, q, `SELECT e.id, e.anchor_id, e.content_sha256 FROM evidence e
			WHERE substr(e.content_sha256, 1, 16) IN (`+placeholders(len(chunk))+`)
			AND NOT EXISTS (SELECT 1 FROM evidence_duplicates d WHERE d.evidence_id = e.id)
			ORDER BY e.rowid`, prefixes, func(rows *sql.Rows) error {
			var id, anchor, sha string
			if err := rows.Scan(&id, &anchor, &sha); err != nil {
				return err
			}
			if _, ok := out[anchor+"|"+sha]; !ok {
				out[anchor+"|"+sha] = id
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("look up evidence by hash: %w", err)
		}
	}
	return out, nil
}
