package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestEmacsEndToEnd runs batch Emacs with eglot and the configuration of
// examples/editors/emacs against the real `palace lsp`: the hover eldoc
// shows, the diagnostic flymake holds on the trigger line, and the buffers
// of M-x palace-context and M-x palace-brief.
func TestEmacsEndToEnd(t *testing.T) {
	emacs, err := exec.LookPath("emacs")
	if err != nil {
		t.Skip("emacs is not on PATH: install Emacs with eglot (Debian: apt-get install -y emacs-nox elpa-eglot) to run the Emacs end-to-end test")
	}
	if out, err := exec.Command(emacs, "--batch", "--eval", "(require 'eglot)").CombinedOutput(); err != nil {
		t.Skipf("emacs has no eglot (Debian: apt-get install -y elpa-eglot; built in from Emacs 29): %v\n%s", err, out)
	}
	e, qi, dao := seedLSP(t)
	_, self, _, _ := runtime.Caller(0)
	example := filepath.Join(filepath.Dir(self), "..", "..", "examples", "editors", "emacs")
	out := filepath.Join(t.TempDir(), "result.json")

	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, emacs, "--batch", "-l", filepath.Join(example, "test", "e2e.el"), filepath.Join("db", "open.go"))
	cmd.Dir = e.dir
	// Line 7 is `db, err := sql.Open("sqlite", p)`; column 14 is in sql.Open.
	cmd.Env = append(filteredEnv(), "PALACE_HOME="+e.home, "USER=tester", "PALACE_BIN="+palaceBin,
		"PALACE_E2E_OUT="+out, "PALACE_E2E_HOVER_LINE=7", "PALACE_E2E_HOVER_COL=14", "HOME="+t.TempDir())
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("emacs: %v\n%s", err, b)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("emacs wrote no result: %v\n%s", err, b)
	}
	t.Logf("emacs saw: %s", raw)
	var res struct {
		Errors      []string `json:"errors"`
		Server      string   `json:"server"`
		Hover       string   `json:"hover"`
		Diagnostics []struct {
			Line int    `json:"line"`
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"diagnostics"`
		Context string `json:"context"`
		KeyFact string `json:"brief_key_fact"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) > 0 {
		t.Fatalf("errors in emacs: %q\n%s", res.Errors, b)
	}
	if res.Server != "palace" {
		t.Errorf("eglot connected to %q", res.Server)
	}
	for _, want := range []string{"triggered here", "‹qi› Open SQLite in WAL mode — promoted · worktree · 1 supporting · 1 verification · " + qi,
		"applies to db/open.go", "Migrations are forward-only"} {
		if !strings.Contains(res.Hover, want) {
			t.Errorf("eldoc's hover lacks %q:\n%s", want, res.Hover)
		}
	}
	found := false
	for _, d := range res.Diagnostics {
		if d.Line == 7 && strings.Contains(d.Text, qi) && strings.Contains(d.Text, "Open SQLite in WAL mode") {
			found = true
		}
	}
	if !found {
		t.Errorf("flymake holds no palace diagnostic on line 7: %+v", res.Diagnostics)
	}
	if !strings.Contains(res.Context, "# palace context") || !strings.Contains(res.Context, qi) || !strings.Contains(res.Context, dao) {
		t.Errorf("*palace context*:\n%s", res.Context)
	}
	if res.KeyFact != dao && res.KeyFact != qi {
		t.Errorf("*palace brief* key fact %q, want one of the cards", res.KeyFact)
	}
}
