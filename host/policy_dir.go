package host

import (
	"github.com/palacehq/palace/policies"
	"github.com/palacehq/palace/repofs"
)

// PolicyDirSources are the sources of a policy folder named on the command
// line: dir as the repo source, held to the checkout it lies in, so a file
// linking out of the repository is refused, not read.
func PolicyDirSources(dir string) policies.Sources {
	src := policies.Sources{RepoDir: dir}
	if root, ok := repofs.CheckoutRoot(dir); ok {
		src.RepoRoot = root
	}
	return src
}
