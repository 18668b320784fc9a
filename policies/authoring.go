package policies

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/format"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/tester"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// Check loads src as Load does and also compiles every *_test.rego file
// that would run against it, so a broken test is found before CI runs it.
// It returns the set (nil on errors) and the located errors of both.
func Check(ctx context.Context, src Sources, opts Options) (*Set, error) {
	snap, err := readSnapshot(src)
	if err != nil {
		return nil, err
	}
	files, err := snap.parse()
	if err != nil {
		return nil, err
	}
	set, err := compile(ctx, files, opts)
	if err != nil {
		return nil, err
	}
	if _, err := compileTests(files, nil); err != nil {
		return nil, err
	}
	return set, nil
}

// TestOptions select which tests RunTests runs. The zero value runs every
// test of every source.
type TestOptions struct {
	// Sources limits the tests to files of these sources (SourceEmbedded,
	// SourceHome, SourceRepo); the policies under test still come from all.
	Sources []string
	// Run is a regular expression on "package.test_name", as `opa test --run`.
	Run string
	// Timeout bounds each test. Defaults to 5s.
	Timeout time.Duration
}

// TestResult is one Rego test's outcome.
type TestResult struct {
	Package  string        `json:"package"` // without "data.", e.g. "palace.gate_test"
	Name     string        `json:"name"`
	File     string        `json:"file"`
	Line     int           `json:"line"`
	Outcome  string        `json:"outcome"`             // pass, fail, error or skip
	FailedAt string        `json:"failed_at,omitempty"` // "file:line:col: expr" of a failed assertion
	Error    string        `json:"error,omitempty"`     // for outcome error
	Duration time.Duration `json:"duration_ns"`
	Output   string        `json:"output,omitempty"` // what print() wrote
}

// TestReport is the outcome of one RunTests.
type TestReport struct {
	Results []TestResult `json:"results"`
	Pass    int          `json:"pass"`
	Fail    int          `json:"fail"`
	Errors  int          `json:"errors"`
	Skip    int          `json:"skip"`
}

// OK reports whether every test that ran passed (skips allowed).
func (r TestReport) OK() bool { return r.Fail == 0 && r.Errors == 0 }

// RunTests runs the *_test.rego files of src like `opa test`, against the
// set Load would build. An embedded default's tests run only while that
// default still serves. Parse and compile errors fail the run with located
// Errors.
func RunTests(ctx context.Context, src Sources, opts TestOptions) (TestReport, error) {
	snap, err := readSnapshot(src)
	if err != nil {
		return TestReport{}, err
	}
	files, err := snap.parse()
	if err != nil {
		return TestReport{}, err
	}
	var filter *regexp.Regexp
	if opts.Run != "" {
		if filter, err = regexp.Compile(opts.Run); err != nil {
			return TestReport{}, fmt.Errorf("test filter %q is not a valid regular expression: %w", opts.Run, err)
		}
	}
	modules, err := compileTests(files, opts.Sources)
	if err != nil {
		return TestReport{}, err
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	runner := tester.NewRunner().
		SetCompiler(ast.NewCompiler().WithDefaultRegoVersion(ast.RegoV1).WithCapabilities(capabilities)).
		SetStore(inmem.New()).
		SetModules(modules).
		EnableTracing(true).
		CapturePrintOutput(true).
		SetTimeout(timeout)
	if filter != nil {
		runner = runner.Filter(opts.Run)
	}
	ch, err := runner.RunTests(ctx, nil)
	if err != nil {
		return TestReport{}, located(err, "")
	}
	var rep TestReport
	for r := range ch {
		tr := TestResult{
			Package:  strings.TrimPrefix(r.Package, "data."),
			Name:     r.Name,
			Duration: r.Duration,
			Output:   string(r.Output),
		}
		if r.Location != nil {
			tr.File, tr.Line = r.Location.File, r.Location.Row
		}
		switch {
		case r.Skip:
			tr.Outcome = "skip"
			rep.Skip++
		case r.Error != nil:
			tr.Outcome, tr.Error = "error", r.Error.Error()
			rep.Errors++
		case r.Fail:
			tr.Outcome, tr.FailedAt = "fail", failedAt(r.Trace)
			rep.Fail++
		default:
			tr.Outcome = "pass"
			rep.Pass++
		}
		rep.Results = append(rep.Results, tr)
	}
	if rep.Results == nil {
		rep.Results = []TestResult{}
	}
	// The runner finishes tests in parallel order; report in file order.
	slices.SortStableFunc(rep.Results, func(a, b TestResult) int {
		if a.File != b.File {
			return strings.Compare(a.File, b.File)
		}
		return a.Line - b.Line
	})
	return rep, nil
}

// failedAt finds the expression that made a test fail: the last failed
// expression of a query, as `opa test` reports it (every-bodies skipped, so
// the failing expression inside is named rather than the every).
func failedAt(trace []*topdown.Event) string {
	for _, e := range slices.Backward(trace) {
		if e.Op != topdown.FailOp || e.Location == nil || e.QueryID == 0 {
			continue
		}
		expr, ok := e.Node.(*ast.Expr)
		if !ok {
			continue
		}
		if _, every := expr.Terms.(*ast.Every); every {
			continue
		}
		return fmt.Sprintf("%s:%d:%d: %s", e.Location.File, e.Location.Row, e.Location.Col, strings.TrimSpace(string(e.Location.Text)))
	}
	return ""
}

// compileTests picks the modules a test run compiles: the effective runtime
// files plus the test files of the wanted sources (nil: all) whose package
// under test still comes from a source no higher than the test's own.
func compileTests(files []File, sources []string) (map[string]*ast.Module, error) {
	eff := effective(files)
	servedFrom := map[string]int{}
	for _, f := range eff {
		if f.Kind == KindConfig {
			continue
		}
		if f.Kind == KindWasm { // a module's points count as served
			for _, p := range f.Points {
				servedFrom[p.Package()] = sourceRank[f.Source]
			}
			continue
		}
		if !f.Test {
			servedFrom[f.Package] = sourceRank[f.Source]
		}
	}
	modules := map[string]*ast.Module{}
	for _, f := range eff {
		if f.Kind == KindWasm || f.Kind == KindConfig {
			continue
		}
		if f.Test {
			if sources != nil && !slices.Contains(sources, f.Source) {
				continue
			}
			if r, ok := servedFrom[strings.TrimSuffix(f.Package, "_test")]; ok && r > sourceRank[f.Source] {
				continue
			}
		}
		modules[f.Path] = f.Module()
	}
	c := ast.NewCompiler().WithDefaultRegoVersion(ast.RegoV1).WithCapabilities(capabilities)
	if c.Compile(modules); c.Failed() {
		return nil, located(c.Errors, "")
	}
	return modules, nil
}

// Format formats one Rego v1 source file with OPA's formatter. path names
// the file in errors.
func Format(path string, src []byte) ([]byte, error) {
	out, err := format.SourceWithOpts(path, src, format.Opts{RegoVersion: ast.RegoV1})
	if err != nil {
		return nil, located(err, path)
	}
	return out, nil
}

// PolicyFiles lists the .rego files under dir as the loader sees them:
// sorted, hidden folders and files skipped. A missing dir has none.
func PolicyFiles(dir string) ([]string, error) { return sourceFiles(dir, false) }
