package host

import (
	"context"

	"github.com/palacehq/palace/repofs"
	"github.com/palacehq/palace/policies"
	"github.com/palacehq/palace/store"
)

// The policy tooling the command line and the long-running surfaces need,
// exposed here so that they import host alone: `palace policy`
// (list, check, eval, test, fmt, defaults, scaffold) works on policy files
// and sources rather than on an open palace, so these are plain functions
// and type names over the policies package, not methods of Host. Keeping the
// surface in this one file makes it narrow and visible; an import test
// keeps cmd/palace, lsp and mcp from reaching past it.
type (
	// PolicySet is a loaded, compiled set of policies.
	PolicySet = policies.Set
	// PolicySources are the folders policies load from, above the
	// embedded defaults.
	PolicySources = policies.Sources
	// PolicyLoadOptions tune loading (engine choice, timeouts).
	PolicyLoadOptions = policies.Options
	// PolicyErrors are located policy errors (file:line:col: code: message).
	PolicyErrors = policies.Errors
	// PolicyError is one located policy error.
	PolicyError = policies.Error
	// PolicyServed says which source, engine and files serve a point.
	PolicyServed = policies.Served
	// PolicyFile is one file of a loaded set.
	PolicyFile = policies.File
	// PolicyLanesConfig is the lanes configuration (defaults and lanes.json).
	PolicyLanesConfig = policies.LanesConfig
	// PolicyPoint is a decision point.
	PolicyPoint = policies.Point
	// PolicyInputError is a decision-point input that does not fit its
	// shape.
	PolicyInputError = policies.InputError
	// PolicyGateOutput is the gate's answer.
	PolicyGateOutput = policies.GateOutput
	// PolicyTestOptions select Rego unit tests to run.
	PolicyTestOptions = policies.TestOptions
	// PolicyTestReport is the outcome of a Rego unit-test run.
	PolicyTestReport = policies.TestReport
)

// PolicyKindConfig is the kind of a lanes configuration file in a set.
const PolicyKindConfig = policies.KindConfig

// The policy sources a test run may be narrowed to.
const (
	PolicySourceEmbedded = policies.SourceEmbedded
	PolicySourceRepo     = policies.SourceRepo
)

// SchemaVersion is the database schema version this palace writes.
var SchemaVersion = store.SchemaVersion

// PolicyPoints lists the decision points in their canonical order.
func PolicyPoints() []PolicyPoint { return policies.Points }

// ParsePolicyPoint parses a decision point's name (gate, scope, …).
func ParsePolicyPoint(s string) (PolicyPoint, error) { return policies.ParsePoint(s) }

// PolicyDirSources are the sources of a policy folder named on the command
// line: dir as the repo source, held like a workspace's .palace/policies
// to the checkout it lies in (repofs.CheckoutRoot), if any, so a file
// there that links out of the repository is refused, not read.
func PolicyDirSources(dir string) PolicySources {
	src := PolicySources{RepoDir: dir}
	if root, ok := repofs.CheckoutRoot(dir); ok {
		src.RepoRoot = root
	}
	return src
}

// LoadPolicies loads and compiles the policies of src.
func LoadPolicies(ctx context.Context, src PolicySources, opts PolicyLoadOptions) (*PolicySet, error) {
	return policies.Load(ctx, src, opts)
}

// CheckPolicies compiles the policies of src and their test files.
func CheckPolicies(ctx context.Context, src PolicySources, opts PolicyLoadOptions) (*PolicySet, error) {
	return policies.Check(ctx, src, opts)
}

// RunPolicyTests runs the Rego unit tests of src.
func RunPolicyTests(ctx context.Context, src PolicySources, opts PolicyTestOptions) (PolicyTestReport, error) {
	return policies.RunTests(ctx, src, opts)
}

// FormatPolicy formats one Rego file's source.
func FormatPolicy(path string, src []byte) ([]byte, error) { return policies.Format(path, src) }

// PolicyFilesIn lists the .rego files under dir.
func PolicyFilesIn(dir string) ([]string, error) { return policies.PolicyFiles(dir) }

// ExportDefaultPolicies returns the embedded default policies, by file name.
func ExportDefaultPolicies() (map[string][]byte, error) { return policies.ExportDefaults() }

// ScaffoldPolicy returns starter files for overriding point p.
func ScaffoldPolicy(p PolicyPoint) (map[string][]byte, error) { return policies.Scaffold(p) }
