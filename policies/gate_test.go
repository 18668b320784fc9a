package policies_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/cover"
	"github.com/open-policy-agent/opa/v1/tester"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/policies"
)

// TestDefaultRegoTests runs default/*_test.rego with OPA's test runner and
// checks that they cover every line of every default policy.
func TestDefaultRegoTests(t *testing.T) {
	modules := map[string]*ast.Module{}
	paths, _ := filepath.Glob("default/*.rego")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		m, err := ast.ParseModuleWithOpts(p, string(b), ast.ParserOptions{RegoVersion: ast.RegoV1})
		if err != nil {
			t.Fatal(err)
		}
		modules[p] = m
	}
	cov := cover.New()
	ch, err := tester.NewRunner().SetModules(modules).SetCoverageQueryTracer(cov).RunTests(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for r := range ch {
		n++
		if !r.Pass() {
			t.Errorf("%s.%s failed at %s", r.Package, r.Name, r.Location)
		}
	}
	if n < 30 {
		t.Fatalf("ran %d rego tests, want the full default suite", n)
	}
	report := cov.Report(modules)
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.rego") {
			continue
		}
		for _, r := range report.Files[p].NotCovered {
			t.Errorf("%s:%d-%d is not covered by the default tests", p, r.Start.Row, r.End.Row)
		}
	}
}

func gateInput(tier, target string, s, v, te, c int, reviewerType string) policies.GateInput {
	return policies.GateInput{
		Action: "promote", Target: target,
		Card:     policies.GateCard{ID: "kc_1", Tier: tier, Status: "candidate", Anchor: "worktree"},
		Counts:   domain.RoleCounts{Supporting: s, Verification: v, Teaching: te, Counterexample: c},
		Reviewer: policies.Reviewer{Name: "r", Type: reviewerType}, Mode: reviewerType,
	}
}

func TestDefaultGateTable(t *testing.T) {
	set, err := policies.LoadDefaults(context.Background(), policies.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		in      policies.GateInput
		allow   bool
		missing map[string]int
	}{
		{"dao_tian canonical met", gateInput("dao_tian", "canonical", 3, 2, 1, 0, "human"), true, nil},
		{"dao_tian canonical short", gateInput("dao_tian", "canonical", 2, 1, 0, 0, "human"), false, map[string]int{"supporting": 1, "verification": 1, "teaching": 1}},
		{"dao_tian canonical by agent", gateInput("dao_tian", "canonical", 3, 2, 1, 0, "agent"), false, nil},
		{"dao_ren promoted met", gateInput("dao_ren", "promoted", 2, 1, 0, 0, "agent"), true, nil},
		{"dao_ren promoted short", gateInput("dao_ren", "promoted", 1, 1, 0, 0, "agent"), false, map[string]int{"supporting": 1}},
		{"shu promoted met", gateInput("shu", "promoted", 1, 1, 0, 0, "agent"), true, nil},
		{"qi promoted short", gateInput("qi", "promoted", 1, 0, 0, 0, "agent"), false, map[string]int{"verification": 1}},
		{"qi counterexample", gateInput("qi", "promoted", 4, 4, 0, 1, "human"), false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, d := set.Gate(context.Background(), tt.in)
			if out.Allow != tt.allow {
				t.Fatalf("allow = %v, want %v (reasons %v)", out.Allow, tt.allow, out.Reasons)
			}
			if d.Error != "" || d.Source != policies.SourceEmbedded || d.Hash == "" {
				t.Errorf("decision = %+v", d)
			}
			if tt.missing != nil {
				if len(out.Missing) != len(tt.missing) {
					t.Fatalf("missing = %v, want %v", out.Missing, tt.missing)
				}
				for k, v := range tt.missing {
					if out.Missing[k] != v {
						t.Errorf("missing[%s] = %d, want %d", k, out.Missing[k], v)
					}
				}
			}
		})
	}
}

func writePolicy(t *testing.T, dir, name, src string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

const strictQi = `package palace.gate

import rego.v1

default decision := {"allow": false, "reasons": ["qi needs 2 verification refs"], "missing": {"verification": 1}}

decision := {"allow": true, "reasons": ["ok"], "missing": {}} if input.counts.verification >= 2
`

func TestRepoPolicyReplacesPackage(t *testing.T) {
	ctx := context.Background()
	repo := t.TempDir()
	def, _ := policies.LoadDefaults(ctx, policies.Options{})
	in := gateInput("qi", "promoted", 1, 1, 0, 0, "human")
	if out, _ := def.Gate(ctx, in); !out.Allow {
		t.Fatalf("default gate denies %v", out.Reasons)
	}
	writePolicy(t, repo, "gate.rego", strictQi)
	set, err := policies.Load(ctx, policies.Sources{RepoDir: repo}, policies.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out, d := set.Gate(ctx, in)
	if out.Allow {
		t.Fatal("team policy did not replace the default gate")
	}
	if d.Source != policies.SourceRepo || d.Hash == def.Served0(policies.Gate).Hash || set.Hash() == def.Hash() {
		t.Errorf("decision %+v does not show the team policy", d)
	}
	sv, _ := set.Served(policies.Gate)
	if len(sv.Files) != 1 || sv.Files[0] != filepath.Join(repo, "gate.rego") {
		t.Errorf("served by %v, want only the team file", sv.Files)
	}
}

func TestLoadErrorsAreLocated(t *testing.T) {
	repo := t.TempDir()
	writePolicy(t, repo, "gate.rego", "package palace.gate\n\nimport rego.v1\n\ndecision := {\"allow\": true\n")
	_, err := policies.Load(context.Background(), policies.Sources{RepoDir: repo}, policies.Options{})
	if err == nil {
		t.Fatal("syntax error loaded")
	}
	want := filepath.Join(repo, "gate.rego") + ":"
	if !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "rego_parse_error") {
		t.Fatalf("error %q is not located as file:line:col: code", err)
	}
}

func TestDeniedBuiltins(t *testing.T) {
	repo := t.TempDir()
	writePolicy(t, repo, "gate.rego", `package palace.gate
import rego.v1
decision := {"allow": r.status_code == 200} if r := http.send({"method": "GET", "url": "http://example.com"})
`)
	_, err := policies.Load(context.Background(), policies.Sources{RepoDir: repo}, policies.Options{})
	if err == nil || !strings.Contains(err.Error(), "http.send") {
		t.Fatalf("http.send compiled: err = %v", err)
	}
}

func TestGateFailsClosed(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"allow as string", `package palace.gate
import rego.v1
decision := {"allow": "true", "reasons": [], "missing": {}}`, `field allow must be a boolean, got "true"`},
		{"undefined", `package palace.gate
import rego.v1
decision := {"allow": true} if input.never`, "undefined"},
		{"loop past deadline", `package palace.gate
import rego.v1
decision := {"allow": count(xs) > 0, "reasons": [], "missing": {}} if {
	xs := [x | some i in numbers.range(1, 100000000); x := i * 2]
}`, "deadline"},
		{"runtime error", `package palace.gate
import rego.v1
decision := {"allow": 1 / 0 == 1}`, "policy palace.gate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := t.TempDir()
			writePolicy(t, repo, "gate.rego", tt.src)
			set, err := policies.Load(context.Background(), policies.Sources{RepoDir: repo}, policies.Options{Timeout: 50 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			out, d := set.Gate(context.Background(), gateInput("qi", "promoted", 9, 9, 9, 0, "human"))
			if out.Allow {
				t.Fatal("failed policy allowed")
			}
			if time.Since(start) > 5*time.Second {
				t.Fatalf("gate hung for %v", time.Since(start))
			}
			if d.Error == "" || len(out.Reasons) != 1 || !strings.Contains(out.Reasons[0], "gate.rego") {
				t.Fatalf("reasons %v / error %q do not name the policy", out.Reasons, d.Error)
			}
			if !strings.Contains(out.Reasons[0], tt.want) {
				t.Errorf("reason %q does not mention %q", out.Reasons[0], tt.want)
			}
		})
	}
}

func BenchmarkGateDefault(b *testing.B) {
	set, err := policies.LoadDefaults(context.Background(), policies.Options{})
	if err != nil {
		b.Fatal(err)
	}
	in := gateInput("dao_ren", "promoted", 2, 0, 0, 0, "agent")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if out, _ := set.Gate(ctx, in); out.Allow {
			b.Fatal("allowed")
		}
	}
}

// BenchmarkGateDefaultRego is the same decision with OPA evaluating the
// embedded gate.rego (what a team's unmodified copy under another file name
// would cost).
func BenchmarkGateDefaultRego(b *testing.B) {
	set, err := policies.LoadDefaults(context.Background(), policies.Options{RegoOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	in := gateInput("dao_ren", "promoted", 2, 0, 0, 0, "agent")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if out, _ := set.Gate(ctx, in); out.Allow {
			b.Fatal("allowed")
		}
	}
}

// TestTeamPolicyReachesTheDefaultEveryWay: a load compiles only the
// palace.default aliases the team's modules refer to, so each way of
// reaching the default gate — an import, a full path, a string key, a key
// known only when evaluated, data.palace.default whole — must still decide
// as the default does.
func TestTeamPolicyReachesTheDefaultEveryWay(t *testing.T) {
	ctx := context.Background()
	def, _ := policies.LoadDefaults(ctx, policies.Options{})
	in := gateInput("qi", "promoted", 1, 1, 0, 0, "human")
	want, _ := def.Gate(ctx, in)
	if !want.Allow {
		t.Fatalf("default gate denies %v", want.Reasons)
	}
	for name, body := range map[string]string{
		"import":        "import data.palace.default.gate as base\n\ndecision := base.decision\n",
		"full path":     "decision := data.palace.default.gate.decision\n",
		"string key":    "decision := data.palace.default[\"gate\"].decision\n",
		"evaluated key": "point := concat(\"\", [\"ga\", \"te\"])\n\ndecision := data.palace.default[point].decision\n",
		"whole default": "decision := object.get(data.palace.default, [\"gate\", \"decision\"], {\"allow\": false, \"reasons\": [\"unreachable\"]})\n",
	} {
		t.Run(name, func(t *testing.T) {
			repo := t.TempDir()
			writePolicy(t, repo, "gate.rego", "package palace.gate\n\nimport rego.v1\n\n"+body)
			set, err := policies.Load(ctx, policies.Sources{RepoDir: repo}, policies.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer set.Close()
			got, d := set.Gate(ctx, in)
			if d.Source != policies.SourceRepo || d.Error != "" || got.Allow != want.Allow || !slices.Equal(got.Reasons, want.Reasons) {
				t.Errorf("team gate = %+v (%+v), want the default's %+v", got, d, want)
			}
		})
	}
}
