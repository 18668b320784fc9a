//go:build unix

package main

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// linkCase is one symbolic link a checkout or a home can hold where palace
// writes, and the command that must refuse it.
type linkCase struct {
	name string
	// setup plants the link in e (e.dir is the checkout, outside a folder
	// beside it holding only "victim") and returns the command, run in
	// e.dir, and the link the message must name with its target.
	setup func(t *testing.T, e *env, outside string) (args []string, link, target string)
}

// TestWritesDoNotFollowLinks: nothing palace writes goes through a
// symbolic link — policy defaults and new, the spool, the global box. Each
// refusal exits 2 naming the link, its target and the fix, and leaves the
// link's target and its folder exactly as they were.
func TestWritesDoNotFollowLinks(t *testing.T) {
	t.Parallel()
	cases := []linkCase{
		{name: "policy defaults: a file of DIR is a link to a file outside",
			setup: func(t *testing.T, e *env, outside string) ([]string, string, string) {
				out := filepath.Join(filepath.Dir(e.dir), "defaults")
				link := filepath.Join(out, "palace", "default", "gate.rego")
				mustSymlink(t, filepath.Join(outside, "victim"), link)
				return []string{"policy", "defaults", "--out", out}, link, filepath.Join(outside, "victim")
			}},
		{name: "policy defaults: a folder of DIR is a link to a folder outside",
			setup: func(t *testing.T, e *env, outside string) ([]string, string, string) {
				out := filepath.Join(filepath.Dir(e.dir), "defaults")
				link := filepath.Join(out, "palace")
				mustSymlink(t, outside, link)
				return []string{"policy", "defaults", "--out", out}, link, outside
			}},
		{name: "policy defaults into the checkout: .palace is a link",
			setup: func(t *testing.T, e *env, outside string) ([]string, string, string) {
				link := filepath.Join(e.dir, ".palace")
				mustSymlink(t, outside, link)
				return []string{"policy", "defaults", "--out", filepath.Join(".palace", "policies")}, link, outside
			}},
		{name: "policy new: a dangling link in gate.rego's place",
			setup: func(t *testing.T, e *env, outside string) ([]string, string, string) {
				link := filepath.Join(e.dir, ".palace", "policies", "gate.rego")
				mustSymlink(t, filepath.Join(outside, "planted.rego"), link)
				return []string{"policy", "new", "gate"}, link, filepath.Join(outside, "planted.rego")
			}},
		{name: "policy new: .palace/policies is a link to a folder outside",
			setup: func(t *testing.T, e *env, outside string) ([]string, string, string) {
				link := filepath.Join(e.dir, ".palace", "policies")
				mustSymlink(t, outside, link)
				return []string{"policy", "new", "gate"}, link, outside
			}},
		{name: "policy new: .palace is a dangling link",
			setup: func(t *testing.T, e *env, outside string) ([]string, string, string) {
				link := filepath.Join(e.dir, ".palace")
				mustSymlink(t, filepath.Join(outside, "made-by-palace"), link)
				return []string{"policy", "new", "scope"}, link, filepath.Join(outside, "made-by-palace")
			}},
		{name: "policy new --out a subfolder: .palace is a link inside the checkout",
			setup: func(t *testing.T, e *env, outside string) ([]string, string, string) {
				if err := os.MkdirAll(filepath.Join(e.dir, "elsewhere", "policies"), 0o755); err != nil {
					t.Fatal(err)
				}
				link := filepath.Join(e.dir, ".palace")
				mustSymlink(t, "elsewhere", link)
				return []string{"policy", "new", "gate", "--out", filepath.Join(e.dir, ".palace", "policies")}, link, "elsewhere"
			}},
		{name: "mailbox file: the spool is a link",
			setup: func(t *testing.T, e *env, outside string) ([]string, string, string) {
				link := filepath.Join(e.home, "field-reports.jsonl")
				mustSymlink(t, filepath.Join(outside, "victim"), link)
				return []string{"mailbox", "file", "--class", "note", "--what", "a report"}, link, filepath.Join(outside, "victim")
			}},
		{name: "mailbox distribute: the lock is a dangling link",
			setup: func(t *testing.T, e *env, outside string) ([]string, string, string) {
				e.ok("mailbox", "file", "--class", "note", "--what", "a report")
				link := filepath.Join(e.home, "mailbox.lock")
				mustSymlink(t, filepath.Join(outside, "made-by-lock"), link)
				return []string{"mailbox", "distribute"}, link, filepath.Join(outside, "made-by-lock")
			}},
		{name: "mailbox distribute: the global box is a link",
			setup: func(t *testing.T, e *env, outside string) ([]string, string, string) {
				e.ok("mailbox", "file", "--class", "note", "--what", "about no project", "--repo", "all")
				link := filepath.Join(e.home, "inbox.jsonl")
				mustSymlink(t, filepath.Join(outside, "victim"), link)
				return []string{"mailbox", "distribute"}, link, filepath.Join(outside, "victim")
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			outside := filepath.Join(filepath.Dir(e.dir), "outside")
			if err := os.MkdirAll(outside, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(outside, "victim"), []byte("precious\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			args, link, target := c.setup(t, e, outside)
			before := treeOf(t, e.dir)
			r := e.run(args...)
			wantCode(t, r, 2, link+" -> "+target+" is a symbolic link", "rm "+link)
			if got := readString(t, filepath.Join(outside, "victim")); got != "precious\n" {
				t.Errorf("the link's target was written: %q", got)
			}
			if ents, _ := os.ReadDir(outside); len(ents) != 1 {
				t.Errorf("something was created through the link: %d entries outside", len(ents))
			}
			if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
				t.Errorf("the link was replaced (%v)", err)
			}
			if after := treeOf(t, e.dir); !maps.Equal(before, after) {
				t.Errorf("the checkout changed:\nbefore %v\nafter  %v", before, after)
			}
			if strings.Contains(args[0]+args[1], "policydefaults") {
				// Nothing of DIR was written either: the check comes first.
				dir := args[len(args)-1]
				if !filepath.IsAbs(dir) {
					dir = filepath.Join(e.dir, dir)
				}
				if _, err := os.Lstat(filepath.Join(dir, "palace", "default", "scope.rego")); err == nil {
					t.Error("defaults wrote other files before refusing")
				}
			}
		})
	}
}

// TestPolicyFilesWriteOutsideLinks: the folders a person names keep their
// links above a checkout, and a checkout reached through a link is written
// normally.
func TestPolicyFilesWriteOutsideLinks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := filepath.Dir(e.dir)
	// DIR outside any checkout, through a link of the person's own.
	real := filepath.Join(base, "real")
	if err := os.MkdirAll(real, 0o755); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, real, filepath.Join(base, "via-link"))
	e.ok("policy", "defaults", "--out", filepath.Join(base, "via-link", "defaults"))
	if _, err := os.Stat(filepath.Join(real, "defaults", "palace", "default", "gate.rego")); err != nil {
		t.Fatalf("defaults through the person's link: %v", err)
	}
	// A second run replaces the files in place.
	e.ok("policy", "defaults", "--out", filepath.Join(base, "via-link", "defaults"))
	// The checkout itself reached through a link.
	linked := filepath.Join(base, "repo-link")
	mustSymlink(t, e.dir, linked)
	r := e.runIn(linked, nil, "policy", "new", "gate")
	wantCode(t, r, 0)
	if _, err := os.Stat(filepath.Join(e.dir, ".palace", "policies", "gate_test.rego")); err != nil {
		t.Fatalf("policy new through a linked checkout: %v", err)
	}
	wantCode(t, e.run("policy", "new", "gate"), 2, "gate.rego already exists: remove it or pass another --out")
	wantCode(t, e.run("policy", "test"), 0)
	// Reached through a link, the checkout still refuses a link inside it.
	e2 := newEnv(t)
	outside := t.TempDir()
	mustSymlink(t, outside, filepath.Join(e2.dir, ".palace"))
	linked2 := filepath.Join(filepath.Dir(e2.dir), "repo-link")
	mustSymlink(t, e2.dir, linked2)
	cmd := exec.Command(palaceBin, "policy", "new", "gate")
	cmd.Dir = linked2
	// PWD keeps the path through the link, as a shell started there does.
	cmd.Env = append(filteredEnv(), "PALACE_HOME="+e2.home, "PWD="+linked2)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), filepath.Join(linked2, ".palace")+" -> "+outside+" is a symbolic link") {
		t.Fatalf("policy new in a linked checkout with a linked .palace: %v\n%s", err, out)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("policy new wrote %d files through .palace", len(ents))
	}
}

// TestExportRefusesLinkedFolders: a rule-file folder that is a link
// (.cursor, .github/instructions) is refused before anything is written.
func TestExportRefusesLinkedFolders(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ target, link string }{
		{"cursor", ".cursor"},
		{"cursor", filepath.Join(".cursor", "rules")},
		{"copilot", ".github"},
		{"copilot", filepath.Join(".github", "instructions")},
	} {
		t.Run(c.link, func(t *testing.T) {
			t.Parallel()
			e := ruleEnv(t)
			outside := t.TempDir()
			link := filepath.Join(e.dir, c.link)
			mustSymlink(t, outside, link)
			wantCode(t, e.run("export", "--to", c.target), 2, link+" -> "+outside+" is a symbolic link", "rm "+link)
			if ents, _ := os.ReadDir(outside); len(ents) != 0 {
				t.Errorf("export wrote %d files through the link", len(ents))
			}
		})
	}
}

// TestInitLeavesTheCheckoutAlone: init writes the home only, so a linked
// .palace in the checkout is never touched.
func TestInitLeavesTheCheckoutAlone(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	outside := t.TempDir()
	mustSymlink(t, outside, filepath.Join(e.dir, ".palace"))
	e.ok("init")
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("init wrote %d files through .palace", len(ents))
	}
}

// treeOf maps every entry under root (but .git) to its content, or to
// "-> target" for a link, without following links.
func treeOf(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && d.Name() == ".git":
			return filepath.SkipDir
		case d.Type()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			out[p] = "-> " + target
			return err
		case d.IsDir():
			out[p] = "dir"
			return nil
		}
		b, err := os.ReadFile(p)
		out[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
