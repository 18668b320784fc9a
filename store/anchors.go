package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// Anchor is one row of anchors.
type Anchor struct {
	ID        string `json:"id"`
	Kind      string `json:"kind"`
	ParentID  string `json:"parent_id,omitempty"`
	Path      string `json:"path,omitempty"`
	Identity  string `json:"identity"`
	CreatedAt string `json:"created_at"`
}

// EnsureAnchor inserts a unless an anchor with the same identity exists, and
// returns the stored row either way.
func (tx *Tx) EnsureAnchor(ctx context.Context, a Anchor) (Anchor, error) {
	var parent any
	if a.ParentID != "" {
		parent = a.ParentID
	}
	if _, err := tx.exec(ctx, `INSERT INTO anchors(id, kind, parent_id, path, identity, created_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(identity) DO NOTHING`,
		a.ID, a.Kind, parent, a.Path, a.Identity, a.CreatedAt); err != nil {
		return Anchor{}, fmt.Errorf("ensure anchor %s: %w", a.Identity, err)
	}
	return anchorBy(ctx, tx.tx, "identity", a.Identity)
}

// AnchorByIdentity looks an anchor up by identity; ErrNotFound if absent.
func (s *Store) AnchorByIdentity(ctx context.Context, identity string) (Anchor, error) {
	return anchorBy(ctx, s.db, "identity", identity)
}

// AnchorByID looks an anchor up by id; ErrNotFound if absent.
func (s *Store) AnchorByID(ctx context.Context, id string) (Anchor, error) {
	return anchorBy(ctx, s.db, "id", id)
}

// RepoIdentitiesFolded lists the identities of the repo anchors whose
// identity equals identity but for ASCII case, oldest first (then by
// identity), without their "repo:" prefix.
func (s *Store) RepoIdentitiesFolded(ctx context.Context, identity string) ([]string, error) {
	var out []string
	err := queryEach(ctx, s.db, `SELECT identity FROM anchors WHERE kind = 'repo' AND lower(identity) = lower(?)
		ORDER BY created_at, identity`, []any{"repo:" + identity}, func(rows *sql.Rows) error {
		var id string
		if err := rows.Scan(&id); err != nil {
			return err
		}
		out = append(out, strings.TrimPrefix(id, "repo:"))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("find repo anchors of %s: %w", identity, err)
	}
	return out, nil
}

// Anchors lists every anchor, ordered by kind then identity.
func (s *Store) Anchors(ctx context.Context) ([]Anchor, error) {
	var out []Anchor
	err := queryEach(ctx, s.db, `SELECT id, kind, COALESCE(parent_id,''), path, identity, created_at
		FROM anchors ORDER BY kind, identity`, nil, func(rows *sql.Rows) error {
		var a Anchor
		if err := rows.Scan(&a.ID, &a.Kind, &a.ParentID, &a.Path, &a.Identity, &a.CreatedAt); err != nil {
			return err
		}
		out = append(out, a)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list anchors: %w", err)
	}
	return out, nil
}

func anchorBy(ctx context.Context, q querier, col, val string) (Anchor, error) {
	var a Anchor
	err := q.QueryRowContext(ctx, `SELECT id, kind, COALESCE(parent_id,''), path, identity, created_at
		FROM anchors WHERE `+col+` = ?`, val).Scan(&a.ID, &a.Kind, &a.ParentID, &a.Path, &a.Identity, &a.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return Anchor{}, fmt.Errorf("anchor %s: %w", val, ErrNotFound)
	}
	if err != nil {
		return Anchor{}, fmt.Errorf("read anchor %s: %w", val, err)
	}
	return a, nil
}
