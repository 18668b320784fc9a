package host

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/intake"
	"github.com/palacehq/palace/store"
)

// A workspace is one checkout, keyed by its worktree anchor. Agent mode
// never reads another repository's memory from a workspace unless a person
// allowed it there, in human mode: the decision is an append-only row of
// workspace_permissions (who, when, why), the newest one in force, and
// `palace doctor` shows it.

// MaxPermissionReasonRunes bounds the reason of a workspace decision.
const MaxPermissionReasonRunes = 1000

// WorkspaceAccess is what agents may read from this workspace.
type WorkspaceAccess struct {
	// Workspace is the checkout (its top-level path), "" outside git.
	Workspace string `json:"workspace"`
	// AnchorID is the checkout's worktree anchor, "" outside git.
	AnchorID string `json:"anchor_id,omitempty"`
	// AllRepos is whether agent mode may read every repository's memory
	// here (all_repos, --all-repos). A person in human mode always may.
	AllRepos bool `json:"all_repos"`
	// Decision is the decision in force, nil when no one decided (no).
	Decision *store.WorkspacePermission `json:"decision,omitempty"`
	// How says how a person changes it.
	How string `json:"how"`
}

// WorkspaceAccess reports what agents may read from this workspace. Both
// modes, read-only; a storage failure is KindInternal.
func (h *Host) WorkspaceAccess(ctx context.Context) (WorkspaceAccess, error) {
	out := WorkspaceAccess{How: "palace workspace allow-all-repos (human mode) lets agents read every repository's memory here; palace workspace deny-all-repos takes it back"}
	if !h.loc.InGit {
		out.How = "outside a git checkout agents never read other repositories' memory: run agents inside a checkout a person allowed with palace workspace allow-all-repos"
		return out, nil
	}
	out.Workspace, out.AnchorID = h.loc.Worktree, AnchorID(h.loc.Identity(domain.AnchorWorktree))
	p, found, err := h.store.WorkspacePermission(ctx, out.AnchorID, store.PermissionAllRepos)
	if err != nil {
		return WorkspaceAccess{}, internal(err, "read the workspace's permissions")
	}
	if found {
		out.Decision, out.AllRepos = &p, p.Allowed
	}
	return out, nil
}

// SetAllRepos records, as one append-only row, a person's decision whether
// agent mode may read every repository's memory from this workspace. Human
// mode only; outside git, or with a long or secret-holding reason, it is
// KindInvalid and writes nothing.
func (h *Host) SetAllRepos(ctx context.Context, allowed bool, reason string) (WorkspaceAccess, error) {
	op := "workspace deny-all-repos"
	if allowed {
		op = "workspace allow-all-repos"
	}
	if err := h.gatekeeper().RequireHuman(op); err != nil {
		return WorkspaceAccess{}, err
	}
	if !h.loc.InGit {
		return WorkspaceAccess{}, invalid("cwd", "%s is not inside a git checkout: a workspace is a checkout; run it in the checkout the agent works in (--cwd)", h.loc.Dir)
	}
	reason = strings.TrimSpace(reason)
	if !utf8.ValidString(reason) || utf8.RuneCountInString(reason) > MaxPermissionReasonRunes {
		return WorkspaceAccess{}, invalid("reason", "--reason must be valid UTF-8 of at most %d characters: say briefly why", MaxPermissionReasonRunes)
	}
	if err := intake.RefuseSecrets("reason", reason); err != nil {
		return WorkspaceAccess{}, err
	}
	err := h.store.Tx(ctx, func(tx *store.Tx) error {
		a, err := h.ensureAnchor(ctx, tx, domain.AnchorWorktree)
		if err != nil {
			return err
		}
		return tx.SetWorkspacePermission(ctx, store.WorkspacePermission{AnchorID: a.ID, Permission: store.PermissionAllRepos, Allowed: allowed,
			Actor: h.actor, ActorType: h.actorType(), Reason: reason, CreatedAt: h.stamp()})
	})
	if err != nil {
		return WorkspaceAccess{}, internal(err, "record %s", op)
	}
	return h.WorkspaceAccess(ctx)
}

// crossRepoRead refuses, in agent mode, a read of other repositories'
// memory from a workspace where no person allowed it (KindMode, naming how
// a person allows it). Human mode reads as it asks.
func (h *Host) crossRepoRead(ctx context.Context) error {
	if h.mode != Agent {
		return nil
	}
	acc, err := h.WorkspaceAccess(ctx)
	if err != nil {
		return err
	}
	if acc.AllRepos {
		return nil
	}
	where := "here"
	if acc.Workspace != "" {
		where = "in " + acc.Workspace
	}
	msg := "agent mode does not read other repositories' memory unless a person allowed it for this workspace: a person runs `palace workspace allow-all-repos` (human mode) " + where + ", or the agent works without --all-repos"
	if !h.loc.InGit {
		msg = "agent mode does not read other repositories' memory outside a git checkout: run the agent in a checkout a person allowed with `palace workspace allow-all-repos` (human mode), or work without --all-repos"
	}
	return &Error{Kind: KindMode, Field: "all_repos", Msg: msg}
}

// crossRepoIDs is readAnchorIDs for a listing that may cross repositories:
// a read of every anchor (nil ids) in agent mode needs the workspace's
// permission.
func (h *Host) crossRepoIDs(ctx context.Context, kind string, allRepos bool) ([]string, error) {
	ids, err := h.readAnchorIDs(kind, allRepos)
	if err != nil || ids != nil {
		return ids, err
	}
	if err := h.crossRepoRead(ctx); err != nil {
		return nil, err
	}
	return nil, nil
}

// foreignRead checks, for a read that asked for allRepos, a row anchored at
// anchorID: outside this workspace's chain it needs the workspace's
// permission in agent mode.
func (h *Host) foreignRead(ctx context.Context, allRepos bool, anchorID string) error {
	if !allRepos || h.loc.KindOf(anchorID) != "" {
		return nil
	}
	return h.crossRepoRead(ctx)
}

// mayRead refuses reading card c from here: another repository's card needs
// allRepos, and then foreignRead's permission.
func (h *Host) mayRead(ctx context.Context, c domain.Card, allRepos bool) error {
	if !allRepos {
		return h.foreignCard(ctx, c, "read")
	}
	return h.foreignRead(ctx, true, c.AnchorID)
}
