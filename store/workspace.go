package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/palacehq/palace/domain"
)

// PermissionAllRepos lets agent mode read every repository's memory from a
// workspace.
const PermissionAllRepos = "all_repos"

// WorkspacePermission is one decision a person took about a workspace (a
// checkout, keyed by its worktree anchor): append-only, the newest row of
// an anchor and permission is in force.
type WorkspacePermission struct {
	Seq        int64            `json:"seq"`
	AnchorID   string           `json:"anchor_id"`
	Permission string           `json:"permission"`
	Allowed    bool             `json:"allowed"`
	Actor      string           `json:"actor"`
	ActorType  domain.ActorType `json:"actor_type"`
	Reason     string           `json:"reason,omitempty"`
	CreatedAt  string           `json:"created_at"`
}

// SetWorkspacePermission appends a decision. The anchor must exist; a
// decision not taken by a human is a constraint error.
func (tx *Tx) SetWorkspacePermission(ctx context.Context, p WorkspacePermission) error {
	if _, err := tx.exec(ctx, `INSERT INTO workspace_permissions(anchor_id, permission, allowed, actor, actor_type, reason, created_at)
		VALUES (?,?,?,?,?,?,?)`, p.AnchorID, p.Permission, p.Allowed, p.Actor, p.ActorType, p.Reason, p.CreatedAt); err != nil {
		return fmt.Errorf("record workspace permission %s of %s: %w", p.Permission, p.AnchorID, err)
	}
	return nil
}

// WorkspacePermission returns the decision in force for an anchor and a
// permission; found is false when no one ever decided (which means no).
func (s *Store) WorkspacePermission(ctx context.Context, anchorID, permission string) (p WorkspacePermission, found bool, err error) {
	err = s.db.QueryRowContext(ctx, `SELECT seq, anchor_id, permission, allowed, actor, actor_type, reason, created_at
		FROM workspace_permissions WHERE anchor_id = ? AND permission = ? ORDER BY seq DESC LIMIT 1`, anchorID, permission).
		Scan(&p.Seq, &p.AnchorID, &p.Permission, &p.Allowed, &p.Actor, (*string)(&p.ActorType), &p.Reason, &p.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return WorkspacePermission{}, false, nil
	}
	if err != nil {
		return WorkspacePermission{}, false, fmt.Errorf("read workspace permission %s of %s: %w", permission, anchorID, err)
	}
	return p, true, nil
}
