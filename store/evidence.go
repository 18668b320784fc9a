package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/palacehq/palace/domain"
)

const evidenceCols = `id, content, domain, field, provenance, source_ref, tags, anchor_id, content_sha256, actor, actor_type, created_at`

// InsertEvidence appends one evidence row.
func (tx *Tx) InsertEvidence(ctx context.Context, e domain.Evidence) error {
	tags, err := json.Marshal(nonNil(e.Tags))
	if err != nil {
		return fmt.Errorf("insert evidence: %w", err)
	}
	res, err := tx.exec(ctx, `INSERT INTO evidence(`+evidenceCols+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`,
		e.ID, e.Content, e.Domain, e.Field, e.Provenance, e.SourceRef, string(tags), e.AnchorID,
		e.ContentSHA256, e.Actor, e.ActorType, e.CreatedAt)
	if err != nil {
		return fmt.Errorf("insert evidence %s: %w", e.ID, err)
	}
	if tx.unindexed == 0 {
		// The full-text index is written at commit (Store.Tx).
		if tx.unindexed, err = res.LastInsertId(); err != nil {
			return fmt.Errorf("insert evidence %s: %w", e.ID, err)
		}
	}
	return nil
}

// Evidence reads one row; ErrNotFound if absent.
func (s *Store) Evidence(ctx context.Context, id string) (domain.Evidence, error) {
	rows, err := s.EvidenceByIDs(ctx, []string{id})
	if err != nil {
		return domain.Evidence{}, err
	}
	e, ok := rows[id]
	if !ok {
		return domain.Evidence{}, fmt.Errorf("evidence %s: %w", id, ErrNotFound)
	}
	return e, nil
}

// EvidenceByIDs reads the rows with these ids; absent ids are simply missing
// from the map.
func (s *Store) EvidenceByIDs(ctx context.Context, ids []string) (map[string]domain.Evidence, error) {
	return evidenceByIDs(ctx, s.db, ids)
}

// EvidenceByIDs is the in-transaction form of Store.EvidenceByIDs.
func (tx *Tx) EvidenceByIDs(ctx context.Context, ids []string) (map[string]domain.Evidence, error) {
	return evidenceByIDs(ctx, tx.tx, ids)
}

func evidenceByIDs(ctx context.Context, q querier, ids []string) (map[string]domain.Evidence, error) {
	out := make(map[string]domain.Evidence, len(ids))
	for chunk := range slices.Chunk(ids, 500) {
		if err := queryEvidence(ctx, q, "read evidence", `SELECT `+evidenceCols+` FROM evidence WHERE id IN (`+placeholders(len(chunk))+`)`, anySlice(chunk), func(e domain.Evidence) { out[e.ID] = e }); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// EvidenceFilter selects evidence for ListEvidence. Empty fields match all.
type EvidenceFilter struct {
	Field     string
	AnchorIDs []string
	// Query is free text: only rows holding every word of it match, best
	// full-text (BM25) match first. FTS5 syntax in it is taken literally.
	Query  string
	Limit  int // 0 = no limit
	Offset int
}

// ListEvidence returns matching rows, newest first (best match first with a
// Query), and the total number of matches regardless of Limit.
func (s *Store) ListEvidence(ctx context.Context, f EvidenceFilter) ([]domain.Evidence, int, error) {
	var where []string
	var args []any
	from, order := "evidence e", "e.created_at DESC, e.id DESC"
	if f.Query != "" {
		q := ftsQuery(f.Query)
		if q == "" {
			return nil, 0, nil
		}
		from, order = "evidence_fts JOIN evidence e ON e.rowid = evidence_fts.rowid", "evidence_fts.rank, "+order
		where, args = append(where, "evidence_fts MATCH ?"), append(args, q)
	}
	if f.Field != "" {
		where, args = append(where, "e.field = ?"), append(args, f.Field)
	}
	if len(f.AnchorIDs) > 0 {
		where = append(where, "e.anchor_id IN ("+placeholders(len(f.AnchorIDs))+")")
		args = append(args, anySlice(f.AnchorIDs)...)
	}
	cond := ""
	if len(where) > 0 {
		cond = " WHERE " + strings.Join(where, " AND ")
	}
	total, err := count(ctx, s.db, "count evidence", `SELECT count(*) FROM `+from+cond, args...)
	if err != nil {
		return nil, 0, err
	}
	query := `SELECT e.` + strings.ReplaceAll(evidenceCols, ", ", ", e.") + ` FROM ` + from + cond + ` ORDER BY ` + order
	if f.Limit > 0 {
		query += fmt.Sprintf(" LIMIT %d OFFSET %d", f.Limit, f.Offset)
	}
	var out []domain.Evidence
	if err := queryEvidence(ctx, s.db, "list evidence", query, args, func(e domain.Evidence) { out = append(out, e) }); err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// CountEvidence counts all evidence rows.
func (s *Store) CountEvidence(ctx context.Context) (int, error) {
	return count(ctx, s.db, "count evidence", `SELECT count(*) FROM evidence`)
}

// CardIDExists reports whether id names a card (distill uses it to tell
// "that is a card, not evidence" apart from "unknown id").
func (tx *Tx) CardIDExists(ctx context.Context, id string) (bool, error) {
	var one int
	err := tx.tx.QueryRowContext(ctx, `SELECT 1 FROM cards WHERE id = ?`, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("look up card %s: %w", id, err)
	}
	return true, nil
}

// queryEvidence runs query, which selects evidenceCols, and calls fn for
// each row. A failed query is wrapped with what.
func queryEvidence(ctx context.Context, q querier, what, query string, args []any, fn func(domain.Evidence)) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	for rows.Next() {
		var e domain.Evidence
		var tags string
		if err := rows.Scan(&e.ID, &e.Content, (*string)(&e.Domain), &e.Field, (*string)(&e.Provenance), &e.SourceRef, &tags,
			&e.AnchorID, &e.ContentSHA256, &e.Actor, (*string)(&e.ActorType), &e.CreatedAt); err != nil {
			return fmt.Errorf("scan evidence: %w", err)
		}
		if err := json.Unmarshal([]byte(tags), &e.Tags); err != nil {
			return fmt.Errorf("evidence %s: decode tags: %w", e.ID, err)
		}
		fn(e)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("scan evidence: %w", err)
	}
	return nil
}

// ftsQuery turns free text into an FTS5 query that matches rows holding
// every word: each word is quoted, so operators and punctuation in the text
// are literal.
func ftsQuery(text string) string {
	words := strings.FieldsFunc(text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_'
	})
	for i, w := range words {
		words[i] = `"` + w + `"`
	}
	return strings.Join(words, " ")
}

func placeholders(n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat("?,", n-1) + "?"
}

func anySlice[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// strArgs is vs as query arguments, each a plain string so the driver
// takes it without reflection.
func strArgs[T ~string](vs []T) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

func nonNil(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}

// EvidenceHashes reads the content hashes of the rows with these ids;
// absent ids are missing from the map.
func (s *Store) EvidenceHashes(ctx context.Context, ids []string) (map[string]string, error) {
	out := make(map[string]string, len(ids))
	for chunk := range slices.Chunk(ids, 500) {
		err := queryEach(ctx, s.db, `SELECT id, content_sha256 FROM evidence WHERE id IN (`+placeholders(len(chunk))+`)`, anySlice(chunk), func(rows *sql.Rows) error {
			var id, sum string
			err := rows.Scan(&id, &sum)
			out[id] = sum
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("read evidence hashes: %w", err)
		}
	}
	return out, nil
}
