package host

import (
	"context"
	"path/filepath"
	"runtime/debug"
	"sync"

	"github.com/palacehq/palace/policies"
)

// PolicySources are the directories this host loads policies from:
// $PALACE_HOME/policies and <worktree>/.palace/policies, the latter held
// to the checkout (a link out of it fails the load).
func (h *Host) PolicySources() policies.Sources {
	src := policies.Sources{HomeDir: filepath.Join(h.home, "policies")}
	if h.loc.InGit {
		src.RepoDir = filepath.Join(h.loc.Worktree, ".palace", "policies")
		src.RepoRoot = h.loc.Worktree
	}
	return src
}

// PolicyConfigFor resolves, without opening the database, the policy sources
// and compile options a host of opts would use, so `palace policy` loads
// exactly what it would and shares its module cache.
func PolicyConfigFor(ctx context.Context, opts Options) (policies.Sources, policies.Options, error) {
	h, err := newHost(ctx, opts)
	if err != nil {
		return policies.Sources{}, policies.Options{}, err
	}
	return h.PolicySources(), h.PolicyOptions(), nil
}

// PolicyOptions are the compile options of this host's sets: its policy
// deadline, and the disk cache of compiled .wasm modules under
// $PALACE_HOME/cache/wazero keyed by this build (PolicyCacheVersion).
func (h *Host) PolicyOptions() policies.Options {
	return policies.Options{
		Timeout:  h.policyTimeout,
		CacheDir: filepath.Join(h.home, "cache", "wazero"),
		Version:  PolicyCacheVersion(),
	}
}

// PolicyCacheVersion names this build in the compiled-module cache (release
// or VCS revision, plus the wazero and Extism versions that generate the
// code), so a different palace never reads an entry another wrote.
var PolicyCacheVersion = sync.OnceValue(func() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	if v == "" || v == "(devel)" {
		v = "devel"
		dirty := ""
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && len(s.Value) >= 12:
				v = s.Value[:12]
			case s.Key == "vcs.modified" && s.Value == "true":
				dirty = "+dirty"
			}
		}
		v += dirty
	}
	for _, d := range bi.Deps {
		switch d.Path {
		case "github.com/tetratelabs/wazero":
			v += "-wazero" + d.Version
		case "github.com/extism/go-sdk":
			v += "-extism" + d.Version
		}
	}
	return v
})

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
		h.policySet, h.policyErr = policies.Load(ctx, h.PolicySources(), h.PolicyOptions())
	}
	return h.policySet, h.policyErr
}

// SetPolicies swaps in a new set (a watcher calls it after a good reload).
func (h *Host) SetPolicies(set *policies.Set) {
	h.policyMu.Lock()
	h.policySet, h.policyErr = set, nil
	h.policyMu.Unlock()
}
