package host

import (
	"context"

	"github.com/palacehq/palace/host/policyfile"
	"github.com/palacehq/palace/policies"
)

// How git sees a deciding policy file is package policyfile's; the host
// keeps the cache the context path stamps through.

// LocalPolicyChanges lists the repo policy files (under
// <worktree>/.palace/policies) that are untracked or modified: a decision
// they take is refused for promotion without --allow-local-policy.
func (h *Host) LocalPolicyChanges(ctx context.Context) ([]policyfile.LocalChange, error) {
	return policyfile.LocalChanges(ctx, h.PolicySources().RepoDir)
}

// stampFileStateCached sets d.FileState through the host's cache (the
// context path and the audit).
func (h *Host) stampFileStateCached(ctx context.Context, d *policies.Decision) {
	h.fileStates.StampCached(ctx, d)
}
