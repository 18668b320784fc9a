package host

import (
	"context"
	"path/filepath"

	"github.com/palacehq/palace/policies"
)

// PolicySources are the directories this host loads policies from:
// $PALACE_HOME/policies and <worktree>/.palace/policies.
func (h *Host) PolicySources() policies.Sources {
	src := policies.Sources{HomeDir: filepath.Join(h.home, "policies")}
	if h.loc.InGit {
		src.RepoDir = filepath.Join(h.loc.Worktree, ".palace", "policies")
	}
	return src
}

// Policies returns the current policy set, loading it on first use. A set
// that fails to load returns its located errors; callers decide how to fail
// (gate: closed).
func (h *Host) Policies(ctx context.Context) (*policies.Set, error) {
	h.policyMu.RLock()
	set, err := h.policySet, h.policyErr
	h.policyMu.RUnlock()
	if set != nil || err != nil {
		return set, err
	}
	h.policyMu.Lock()
	defer h.policyMu.Unlock()
	if h.policySet == nil && h.policyErr == nil {
		h.policySet, h.policyErr = policies.Load(ctx, h.PolicySources(), policies.Options{Timeout: h.policyTimeout})
	}
	return h.policySet, h.policyErr
}

// SetPolicies swaps in a new set (a watcher calls it after a good reload).
func (h *Host) SetPolicies(set *policies.Set) {
	h.policyMu.Lock()
	h.policySet, h.policyErr = set, nil
	h.policyMu.Unlock()
}
