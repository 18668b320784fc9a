package host

import (
	"github.com/palacehq/palace/policies"
	"github.com/palacehq/palace/repofs"
)

// PolicyDirSources are the sources of a policy folder named on the command
// line: dir as the repo source, held like a workspace's .palace/policies
// to the checkout it lies in (repofs.CheckoutRoot), if any, so a file
// there that links out of the repository is refused, not read.
func PolicyDirSources(dir string) policies.Sources {
	src := policies.Sources{RepoDir: dir}
	if root, ok := repofs.CheckoutRoot(dir); ok {
		src.RepoRoot = root
	}
	return src
}
