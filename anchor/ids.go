package anchor

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/palacehq/palace/domain"
)

// ID is the id of the anchor with this identity: "an_" + 16 hex of its
// sha256, so the same repository has the same anchor id on every machine.
func ID(identity string) string {
	sum := sha256.Sum256([]byte(identity))
	return "an_" + hex.EncodeToString(sum[:8])
}

// ChainIDs are the anchor ids visible here, innermost first: worktree, repo,
// its aliases, global (only global outside git).
func (l Location) ChainIDs() []string {
	if !l.InGit {
		return []string{ID(GlobalIdentity)}
	}
	ids := []string{
		ID(l.Identity(domain.AnchorWorktree)),
		ID(l.Identity(domain.AnchorRepo)),
	}
	for _, a := range l.RepoAliases {
		ids = append(ids, ID("repo:"+a))
	}
	return append(ids, ID(GlobalIdentity))
}

// KindOf says which kind of this location's chain an anchor id is (an alias
// is repo), "" outside it.
func (l Location) KindOf(id string) domain.AnchorKind {
	for _, k := range []domain.AnchorKind{domain.AnchorWorktree, domain.AnchorRepo, domain.AnchorGlobal} {
		if l.InGit || k == domain.AnchorGlobal {
			if ID(l.Identity(k)) == id {
				return k
			}
		}
	}
	for _, a := range l.RepoAliases {
		if ID("repo:"+a) == id {
			return domain.AnchorRepo
		}
	}
	return ""
}
