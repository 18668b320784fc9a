package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// opaBin finds the stock opa CLI: on PATH, or in the checkout's .tools
// where .ci/run installs it at the version go.mod uses.
func opaBin(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("opa"); err == nil {
		return p
	}
	if p, err := filepath.Abs(filepath.Join("..", "..", ".tools", "opa")); err == nil {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skip("opa is not installed: install it with `GOBIN=$PWD/.tools go install github.com/open-policy-agent/opa@$(go list -m -f '{{.Version}}' github.com/open-policy-agent/opa)` (.ci/run does)")
	return ""
}

func TestPolicyScaffoldPassesPalaceTest(t *testing.T) {
	e := newEnv(t)
	for _, p := range []string{"gate", "scope", "lanes", "mailbox"} {
		e.ok("policy", "new", p)
	}
	out := e.ok("policy", "test", filepath.Join(e.dir, ".palace", "policies"))
	if !strings.Contains(out, "PASS: 7/7") {
		t.Fatalf("palace policy test on the scaffold:\n%s", out)
	}
	wantCode(t, e.run("policy", "new", "gate"), 2, "already exists")
	wantCode(t, e.run("policy", "new", "gates"), 2, "use one of gate, scope, lanes, mailbox, research")
	wantCode(t, e.run("policy", "defaults"), 2, "--out is required")
}

// TestStockOPAOnTeamPolicies runs the real opa CLI: the team-policy
// examples and a scaffold pass `opa test` beside the exported defaults.
func TestStockOPAOnTeamPolicies(t *testing.T) {
	opa := opaBin(t)
	e := newEnv(t)
	defaults := filepath.Join(t.TempDir(), "defaults")
	e.ok("policy", "defaults", "--out", defaults)
	examples, err := filepath.Abs(filepath.Join("..", "..", "examples", "team-policies"))
	if err != nil {
		t.Fatal(err)
	}
	scaffold := filepath.Join(t.TempDir(), "scaffold")
	for _, p := range []string{"gate", "scope", "lanes", "mailbox"} {
		e.ok("policy", "new", p, "--out", scaffold)
	}
	for _, dir := range []string{examples, scaffold} {
		for _, args := range [][]string{{"check", defaults, dir}, {"test", "-v", defaults, dir}} {
			cmd := exec.Command(opa, args...)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("opa %v: %v\n%s", args, err, out)
			}
			if args[0] == "test" {
				if strings.Contains(string(out), "FAIL") || !strings.Contains(string(out), "PASS: ") {
					t.Fatalf("opa %v:\n%s", args, out)
				}
				t.Logf("opa test %s: %s", filepath.Base(dir), lastLine(string(out)))
			}
		}
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
