package host

import (
	"context"

	"github.com/palacehq/palace/policies"
	"github.com/palacehq/palace/repofs"
	"github.com/palacehq/palace/store"
)

// SchemaVersion is the database schema version this palace writes.
var SchemaVersion = store.SchemaVersion

// PolicyPoints lists the decision points in their canonical order.
func PolicyPoints() []policies.Point { return policies.Points }

// ParsePolicyPoint parses a decision point's name (gate, scope, …).
func ParsePolicyPoint(s string) (policies.Point, error) { return policies.ParsePoint(s) }

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

// LoadPolicies loads and compiles the policies of src.
func LoadPolicies(ctx context.Context, src policies.Sources, opts policies.Options) (*policies.Set, error) {
	return policies.Load(ctx, src, opts)
}

// CheckPolicies compiles the policies of src and their test files.
func CheckPolicies(ctx context.Context, src policies.Sources, opts policies.Options) (*policies.Set, error) {
	return policies.Check(ctx, src, opts)
}

// RunPolicyTests runs the Rego unit tests of src.
func RunPolicyTests(ctx context.Context, src policies.Sources, opts policies.TestOptions) (policies.TestReport, error) {
	return policies.RunTests(ctx, src, opts)
}

// FormatPolicy formats one Rego file's source.
func FormatPolicy(path string, src []byte) ([]byte, error) { return policies.Format(path, src) }

// PolicyFilesIn lists the .rego files under dir.
func PolicyFilesIn(dir string) ([]string, error) { return policies.PolicyFiles(dir) }

// ExportDefaultPolicies returns the embedded default policies, by file name.
func ExportDefaultPolicies() (map[string][]byte, error) { return policies.ExportDefaults() }

// ScaffoldPolicy returns starter files for overriding point p.
func ScaffoldPolicy(p policies.Point) (map[string][]byte, error) { return policies.Scaffold(p) }
