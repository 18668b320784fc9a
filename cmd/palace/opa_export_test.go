package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestExportedDefaultsPassStockOPA runs the real opa CLI on what `palace
// policy defaults --out` writes: every file is as `opa fmt` writes it
// (`opa fmt --list` prints nothing), and the defaults' own tests come along,
// so `opa test` on the folder runs and passes them.
func TestExportedDefaultsPassStockOPA(t *testing.T) {
	opa := opaBin(t)
	e := newEnv(t)
	dir := filepath.Join(t.TempDir(), "defaults")
	e.ok("policy", "defaults", "--out", dir)
	for _, p := range []string{"gate", "scope", "lanes", "mailbox", "research"} {
		for _, f := range []string{p + ".rego", p + "_test.rego"} {
			if _, err := os.Stat(filepath.Join(dir, "palace", "default", f)); err != nil {
				t.Errorf("the export has no %s", f)
			}
		}
	}
	out, err := exec.Command(opa, "fmt", "--list", dir).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("opa fmt --list %s: %v\n%s", dir, err, out)
	}
	out, err = exec.Command(opa, "test", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("opa test %s: %v\n%s", dir, err, out)
	}
	m := regexp.MustCompile(`PASS: (\d+)/(\d+)`).FindStringSubmatch(string(out))
	if m == nil || m[1] != m[2] {
		t.Fatalf("opa test %s:\n%s", dir, out)
	}
	if n, _ := strconv.Atoi(m[1]); n < 20 {
		t.Errorf("opa test ran %d tests of the defaults, want their whole suite:\n%s", n, out)
	}
	if strings.Contains(string(out), "FAIL") {
		t.Errorf("opa test:\n%s", out)
	}
}
