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

// ChainIDs are the anchor ids visible from this location, innermost first:
// worktree, repo, global (global only outside git).
func (l Location) ChainIDs() []string {
	if !l.InGit {
		return []string{ID(GlobalIdentity)}
	}
	return []string{
		ID(l.Identity(domain.AnchorWorktree)),
		ID(l.Identity(domain.AnchorRepo)),
		ID(GlobalIdentity),
	}
}

// KindOf says which kind of this location's chain an anchor id is, "" when
// the anchor is outside it (another repository or worktree).
func (l Location) KindOf(id string) domain.AnchorKind {
	for _, k := range []domain.AnchorKind{domain.AnchorWorktree, domain.AnchorRepo, domain.AnchorGlobal} {
		if l.InGit || k == domain.AnchorGlobal {
			if ID(l.Identity(k)) == id {
				return k
			}
		}
	}
	return ""
}
