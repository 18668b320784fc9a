package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnexpandedHomeIsRefused: a PALACE_HOME or --home holding a "~" or "$"
// that no shell expanded (an MCP client's env, a JSON setting) is refused
// with exit 2 and a message, instead of becoming a folder of that name in
// the current directory; doctor says so too.
func TestUnexpandedHomeIsRefused(t *testing.T) {
	e := newEnv(t)
	for _, home := range []string{"~/.palace", "${HOME}/.palace", "$HOME/.palace", "${PALACE_HOME:-${HOME}/.palace}"} {
		e.vars = []string{"PALACE_HOME=" + home}
		r := e.run("record", "--content", "x")
		wantCode(t, r, 2, "PALACE_HOME=", "was not expanded", "absolute path")
		r = e.run("doctor")
		wantCode(t, r, 1)
		if !strings.Contains(r.stdout, "FAIL home") || !strings.Contains(r.stdout, "was not expanded") {
			t.Errorf("doctor with PALACE_HOME=%s:\n%s", home, r.stdout)
		}
	}
	e.vars = nil
	wantCode(t, e.run("card", "list", "--home", "~/p"), 2, `--home "~/p" holds a literal "~"`)
	entries, err := os.ReadDir(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range entries {
		if strings.ContainsAny(en.Name(), "~$") {
			t.Errorf("a refused home left %s in the checkout", filepath.Join(e.dir, en.Name()))
		}
	}
	// A "~" inside a name is no shell's tilde.
	e.ok("card", "list", "--home", filepath.Join(t.TempDir(), "a~b"))
}
