//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportReadsOnlyTheRepository: a rule file of the checkout that links
// out of it is refused (exit 2, naming where it leads) and nothing of the
// file it points at is recorded or printed; a link that stays inside the
// checkout (CLAUDE.md -> AGENTS.md) is followed.
func TestImportReadsOnlyTheRepository(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	outside := t.TempDir()
	secret := filepath.Join(outside, "notes.md")
	if err := os.WriteFile(secret, []byte("- the staging password is hunter2-in-the-notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, secret, filepath.Join(e.dir, "CLAUDE.md"))
	if err := os.MkdirAll(filepath.Join(outside, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "docs", "rules.md"), []byte("- the docs folder outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, filepath.Join(outside, "docs"), filepath.Join(e.dir, "docs"))
	cards, ev := e.counts()
	for _, c := range []struct{ arg, resolved string }{
		{"CLAUDE.md", secret},
		{filepath.Join(e.dir, "CLAUDE.md"), secret},
		{filepath.Join("docs", "rules.md"), filepath.Join(outside, "docs", "rules.md")},
	} {
		r := e.run("import", c.arg)
		wantCode(t, r, 2, "resolves to "+c.resolved+", outside "+e.dir, "replace the link with a copy of the file, or remove it")
		if strings.Contains(r.stdout+r.stderr, "hunter2") || strings.Contains(r.stdout+r.stderr, "folder outside") {
			t.Errorf("import %s printed the outside file's text:\n%s%s", c.arg, r.stdout, r.stderr)
		}
	}
	if c2, ev2 := e.counts(); c2 != cards || ev2 != ev {
		t.Fatalf("an import through a link recorded %d cards and %d evidence", c2-cards, ev2-ev)
	}
	// A link inside the checkout is the repository's own arrangement.
	if err := os.Remove(filepath.Join(e.dir, "CLAUDE.md")); err != nil {
		t.Fatal(err)
	}
	e.write("AGENTS.md", []byte("# Rules\n\n- Keep PRs small.\n"))
	mustSymlink(t, "AGENTS.md", filepath.Join(e.dir, "CLAUDE.md"))
	out := e.ok("import", "CLAUDE.md")
	if !strings.Contains(out, "Keep PRs small.") {
		t.Fatalf("import through an inside link:\n%s", out)
	}
	// A file outside any checkout is the caller's to name, link or not.
	mustSymlink(t, secret, filepath.Join(outside, "mine.md"))
	if r := e.run("import", filepath.Join(outside, "mine.md")); r.code != 0 {
		t.Fatalf("import of a file outside the checkout: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestRepoPoliciesReadOnlyTheRepository: a repository policy file (a gate,
// lanes.json) or a policy folder that links out of the checkout fails the
// load naming it, so an allow-all gate kept outside never decides; the
// gate fails closed. A folder linked inside the checkout is read.
func TestRepoPoliciesReadOnlyTheRepository(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		// plant sets up the link; it returns the file the error names.
		plant func(t *testing.T, e *env, outside string) string
	}{
		{"gate.rego links out", func(t *testing.T, e *env, outside string) string {
			link := filepath.Join(e.dir, ".palace", "policies", "gate.rego")
			mustSymlink(t, filepath.Join(outside, "gate.rego"), link)
			return link
		}},
		{".palace links out", func(t *testing.T, e *env, outside string) string {
			if err := os.MkdirAll(filepath.Join(outside, "policies"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(filepath.Join(outside, "gate.rego"), filepath.Join(outside, "policies", "gate.rego")); err != nil {
				t.Fatal(err)
			}
			mustSymlink(t, outside, filepath.Join(e.dir, ".palace"))
			return filepath.Join(e.dir, ".palace", "policies", "gate.rego")
		}},
		{".palace/policies links out", func(t *testing.T, e *env, outside string) string {
			mustSymlink(t, outside, filepath.Join(e.dir, ".palace", "policies"))
			return filepath.Join(e.dir, ".palace", "policies", "gate.rego")
		}},
		{"lanes.json links out", func(t *testing.T, e *env, outside string) string {
			if err := os.WriteFile(filepath.Join(outside, "lanes.json"), []byte(`{"core_min": 0}`), 0o644); err != nil {
				t.Fatal(err)
			}
			link := filepath.Join(e.dir, ".palace", "policies", "lanes.json")
			mustSymlink(t, filepath.Join(outside, "lanes.json"), link)
			e.writeRepoPolicy("gate.rego", []byte(allowAllGate))
			e.git("add", ".palace")
			e.git("commit", "-q", "-m", "team policies")
			return link
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			outside := t.TempDir()
			if err := os.WriteFile(filepath.Join(outside, "gate.rego"), []byte(allowAllGate), 0o644); err != nil {
				t.Fatal(err)
			}
			card := e.distill("Every change is reviewed", "qi", "--supporting", e.record("seen once"))
			file := c.plant(t, e, outside)
			want := file + ":1:1: load_error: " + file + " resolves to "
			r := e.run("promote", card, "--reason", "the gate outside says yes", "--allow-local-policy")
			if r.code != 1 || !strings.Contains(r.stdout+r.stderr, want) || !strings.Contains(r.stdout+r.stderr, "outside "+e.dir) {
				t.Fatalf("promote: exit %d, want 1 naming %q\n%s%s", r.code, want, r.stdout, r.stderr)
			}
			if st := e.jsonOf("card", "show", card)["status"]; st != "candidate" {
				t.Fatalf("the card became %v", st)
			}
			r = e.run("policy", "check", filepath.Join(".palace", "policies"))
			if r.code != 1 || !strings.Contains(r.stdout+r.stderr, "resolves to ") {
				t.Fatalf("policy check DIR: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
		})
	}
	t.Run("a policy folder linked inside the checkout", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.write(filepath.Join("team", "gate.rego"), []byte(allowAllGate))
		if err := os.MkdirAll(filepath.Join(e.dir, ".palace"), 0o755); err != nil {
			t.Fatal(err)
		}
		mustSymlink(t, filepath.Join("..", "team"), filepath.Join(e.dir, ".palace", "policies"))
		out := e.ok("policy", "list")
		if !strings.Contains(out, "repo") || !strings.Contains(out, filepath.Join(".palace", "policies", "gate.rego")) {
			t.Fatalf("policy list does not serve the linked folder's gate:\n%s", out)
		}
	})
}
