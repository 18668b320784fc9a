package mail_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/palacehq/palace/host/internal/jobtest"
	"github.com/palacehq/palace/host/mail"
	"github.com/palacehq/palace/internal/hosterr"
	"github.com/palacehq/palace/mailbox"
	"github.com/palacehq/palace/policies"
)

func TestMailRulesTeamPolicy(t *testing.T) {
	f := jobtest.New(t, jobtest.Options{Git: true})
	write(t, f, ".palace/policies/mailbox.rego", teamMailbox)
	box := letter("hung", `"tool":"bash"`) + "\n" + letter("no tool", "") + "\n" + letter("tracked", `"tool":"x","external":true`) + "\n"
	write(t, f, ".palace/inbox.jsonl", box)
	m := mailer(f, 0)
	rules, served := m.Rules(context.Background())
	if rules == nil || served == nil || served.Source != policies.SourceRepo {
		t.Fatalf("team policy not used: %v %+v", rules, served)
	}
	rep, err := m.Check(context.Background(), mail.CheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	wantFindings(t, rep.Findings,
		".palace/inbox.jsonl:2:1: PM120 tool_error letters must name the tool",
		".palace/inbox.jsonl:3:1: PM100 project box, line 3: external letters need a reference",
	)
	if rep.Errors != 2 || rep.Warnings != 0 || rep.Policy == nil || strings.Join(rep.Checked, ",") != ".palace/inbox.jsonl" {
		t.Errorf("report = %+v", rep)
	}
	// An editor's buffer is checked with the same rules.
	got := m.CheckBox(context.Background(), mail.BoxCheckRequest{Path: ".palace/inbox.jsonl", Content: []byte(letter("unsaved", "") + "\n")})
	wantFindings(t, got, ".palace/inbox.jsonl:1:1: PM120 tool_error letters must name the tool")
}

func TestMailRulesEmbeddedDefaultIsSkipped(t *testing.T) {
	def, err := os.ReadFile("../../policies/default/mailbox.rego")
	if err != nil {
		t.Fatal(err)
	}
	for name, files := range map[string]map[string]string{
		"no team policies":            nil,
		"gate only, broken":           {"gate.rego": "package palace.gate\n\ndecision := {"},
		"copy of the embedded":        {"mailbox.rego": string(def)},
		"mentions mailbox, not it":    {"gate.rego": "# see also the mailbox policy\npackage palace.gate\n\nimport rego.v1\n\ndecision := {\"allow\": true, \"reasons\": [], \"missing\": {}}\n"},
		"mailbox tests only, no rule": {"mailbox_test.rego": "package palace.mailbox_test\n"},
	} {
		t.Run(name, func(t *testing.T) {
			f := jobtest.New(t, jobtest.Options{Git: true})
			for file, body := range files {
				write(t, f, filepath.Join(".palace/policies", file), body)
			}
			write(t, f, ".palace/inbox.jsonl", letter("x", "")+"\n")
			m := mailer(f, 0)
			if rules, served := m.Rules(context.Background()); rules != nil || served != nil {
				t.Errorf("rules = %v, served = %+v; want none (the default denies nothing)", rules, served)
			}
			// A broken gate policy must not fail the mailbox check: only a
			// set that may serve the mailbox point is loaded at all.
			rep, err := m.Check(context.Background(), mail.CheckRequest{})
			if err != nil || len(rep.Findings) != 0 {
				t.Errorf("check: %v %v", findingStrings(rep.Findings), err)
			}
		})
	}
}

// The mailbox fails closed: a team policy that does not load, or cannot
// decide a letter, refuses the letters it cannot judge (PM101).
func TestMailRulesFailClosed(t *testing.T) {
	tests := []struct {
		name, policy string
		want         []string
	}{
		{"does not compile", "package palace.mailbox\n\ndeny contains x if {\n", []string{
			`PM101 palace.mailbox policy failed: the policy set does not load: `,
		}},
		{"undefined for letters with a repo", "package palace.mailbox\n\nimport rego.v1\n\ndeny := set() if not input.letter.repo\n", []string{
			"a.jsonl:1:1: PM101 palace.mailbox policy failed: policy palace.mailbox",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := jobtest.New(t, jobtest.Options{Git: true})
			write(t, f, ".palace/policies/mailbox.rego", tt.policy)
			write(t, f, "a.jsonl", letter("x", `"repo":"github.com/a/b"`)+"\n"+letter("y", "")+"\n")
			rep, err := mailer(f, 0).Check(context.Background(), mail.CheckRequest{Paths: []string{"a.jsonl"}})
			if err != nil {
				t.Fatal(err)
			}
			got := findingStrings(rep.Findings)
			if len(got) < len(tt.want) {
				t.Fatalf("findings %q, want %q", got, tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) || strings.Contains(got[i], "\n") {
					t.Errorf("finding %d = %q, want it to contain %q on one line", i, got[i], w)
				}
			}
			if tt.name == "undefined for letters with a repo" && len(got) != 1 {
				t.Errorf("only the letter the policy cannot decide is refused: %q", got)
			}
		})
	}
}

// A policy that times out on every letter stops being asked after ten
// failures: the check ends with ten findings and a summary, and does not
// wait out a deadline per letter.
func TestMailRulesStopAfterFailures(t *testing.T) {
	f := jobtest.New(t, jobtest.Options{Git: true})
	write(t, f, ".palace/policies/mailbox.rego", "package palace.mailbox\n\nimport rego.v1\n\n"+
		`deny contains "x" if count([x | some i in numbers.range(1, 100000000); x := i]) > 0`+"\n")
	var box strings.Builder
	for i := range 200 {
		box.WriteString(letter(fmt.Sprint("letter ", i), "") + "\n")
	}
	write(t, f, "a.jsonl", box.String())
	rep, err := mailer(f, 5*time.Millisecond).Check(context.Background(), mail.CheckRequest{Paths: []string{"a.jsonl"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 11 || !strings.Contains(rep.Findings[10].Message, "for this and 189 more letters") ||
		!strings.Contains(rep.Findings[0].Message, "deadline") {
		t.Errorf("findings:\n%s", strings.Join(findingStrings(rep.Findings), "\n"))
	}
}

func TestMailCheckStagedDefaults(t *testing.T) {
	f := jobtest.New(t, jobtest.Options{Git: true})
	first := letter("first", `"tool":"bash"`) + "\n"
	write(t, f, ".palace/inbox.jsonl", first)
	write(t, f, "sub/.palace/inbox.jsonl", first)
	jobtest.Git(t, f.Dir, "add", ".")
	jobtest.Git(t, f.Dir, "commit", "-q", "-m", "boxes")
	m := mailer(f, 0)

	// Nothing staged: nothing to check.
	if rep, err := m.Check(context.Background(), mail.CheckRequest{Staged: true}); err != nil || len(rep.Checked) != 0 {
		t.Fatalf("nothing staged: %+v %v", rep, err)
	}
	// A clean append in one box, a rewrite in the other.
	write(t, f, ".palace/inbox.jsonl", first+letter("second", "")+"\n")
	write(t, f, "sub/.palace/inbox.jsonl", letter("first, edited", "")+"\n")
	jobtest.Git(t, f.Dir, "add", ".")
	rep, err := m.Check(context.Background(), mail.CheckRequest{Staged: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rep.Checked, ","); got != ".palace/inbox.jsonl,sub/.palace/inbox.jsonl" {
		t.Errorf("checked %s", got)
	}
	if rep.Errors != 1 || rep.Findings[0].Code != mailbox.CodeHistory || rep.Findings[0].Path != "sub/.palace/inbox.jsonl" {
		t.Errorf("findings %q", findingStrings(rep.Findings))
	}
	// From a subdirectory, paths are named relative to it.
	sub := mailer(at(t, f, filepath.Join(f.Dir, "sub")), 0)
	rep, err = sub.Check(context.Background(), mail.CheckRequest{Staged: true})
	if err != nil || strings.Join(rep.Checked, ",") != "../.palace/inbox.jsonl,.palace/inbox.jsonl" || rep.Errors != 1 {
		t.Errorf("from sub: %+v %v", rep, err)
	}
	// The committed box is what an editor checks history against.
	base, err := m.CommittedBox(context.Background(), ".palace/inbox.jsonl")
	if err != nil || string(base) != first {
		t.Errorf("committed box: %q, %v; want the first letter", base, err)
	}
	got := m.CheckBox(context.Background(), mail.BoxCheckRequest{Path: ".palace/inbox.jsonl", Content: []byte(letter("rewritten", "") + "\n"), Base: base})
	if len(got) == 0 || got[0].Code != mailbox.CodeHistory {
		t.Errorf("a rewritten buffer: %q; want the history finding", findingStrings(got))
	}
	if none, err := m.CommittedBox(context.Background(), "new.jsonl"); err != nil || none != nil {
		t.Errorf("a box HEAD does not hold: %q, %v", none, err)
	}
}

func TestMailCheckErrors(t *testing.T) {
	f := jobtest.New(t, jobtest.Options{Git: true})
	m := mailer(f, 0)
	_, err := m.Check(context.Background(), mail.CheckRequest{Paths: []string{"nope.jsonl"}})
	if hosterr.KindOf(err) != hosterr.KindInvalid || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	write(t, f, "untracked.jsonl", "")
	_, err = m.Check(context.Background(), mail.CheckRequest{Paths: []string{"untracked.jsonl"}, Staged: true})
	if hosterr.KindOf(err) != hosterr.KindInvalid || !errors.Is(err, mailbox.ErrNotStaged) {
		t.Errorf("untracked file: %v", err)
	}
	plain := jobtest.New(t, jobtest.Options{})
	_, err = mailer(plain, 0).Check(context.Background(), mail.CheckRequest{Staged: true})
	if hosterr.KindOf(err) != hosterr.KindInvalid || !strings.Contains(err.Error(), "not inside a git checkout") {
		t.Errorf("--staged outside git: %v", err)
	}
	// A box that is a symbolic link is refused before anything is read.
	target := write(t, f, "real.jsonl", letter("x", `"tool":"t"`)+"\n")
	if err := os.Symlink(target, filepath.Join(f.Dir, "link.jsonl")); err != nil {
		t.Fatal(err)
	}
	_, err = m.Check(context.Background(), mail.CheckRequest{Paths: []string{"link.jsonl"}})
	if hosterr.KindOf(err) != hosterr.KindInvalid || !strings.Contains(err.Error(), "link.jsonl") {
		t.Errorf("linked box: %v", err)
	}
}

func TestMailCheckGlobalBox(t *testing.T) {
	f := jobtest.New(t, jobtest.Options{Git: true})
	m := mailer(f, 0)
	global := m.Mailbox().GlobalBoxPath()
	if err := os.WriteFile(global, []byte(letter("project letter", `"repo":"github.com/a/b"`)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rep, err := m.Check(context.Background(), mail.CheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Checked) != 1 || rep.Checked[0] != global || rep.Errors != 1 || rep.Findings[0].Code != mailbox.CodeProjectInGlobal {
		t.Errorf("global box: %+v", rep)
	}
	if got := m.CheckBox(context.Background(), mail.BoxCheckRequest{Path: global, Content: []byte(letter("again", `"repo":"github.com/a/b"`) + "\n")}); len(got) != 1 || got[0].Code != mailbox.CodeProjectInGlobal {
		t.Errorf("global box buffer: %q", findingStrings(got))
	}
}

// Filing a letter stamps it with the clock and the actor, makes a
// relative repository absolute, refuses a bad letter (KindInvalid) and a
// secret (KindDenied, redacted), writing nothing.
func TestMailFile(t *testing.T) {
	f := jobtest.New(t, jobtest.Options{Git: true})
	f.Actor = "claude"
	f.Clock = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	m := mailer(f, 0)
	filed, err := m.File(context.Background(), mailbox.Letter{Class: "tool_error", What: "hung", Repo: "."})
	if err != nil {
		t.Fatal(err)
	}
	if filed.Letter.Agent != "claude" || filed.Letter.Repo != f.Dir || filed.Letter.TS != "2025-06-01T12:00:00.000Z" {
		t.Errorf("filed %+v", filed.Letter)
	}
	_, err = m.File(context.Background(), mailbox.Letter{What: "no class"})
	var he *hosterr.Error
	if !errors.As(err, &he) || he.Kind != hosterr.KindInvalid || he.Field != "class" {
		t.Errorf("missing class: %#v", err)
	}
	_, err = m.File(context.Background(), mailbox.Letter{Class: "leak", What: "key AKIAIOSFODNN7EXAMPLF in the log"})
	if hosterr.KindOf(err) != hosterr.KindDenied || !strings.Contains(err.Error(), "AKIA************MPLF") || strings.Contains(err.Error(), "AKIAIOSFODNN7EXAMPLF") {
		t.Errorf("secret: %v", err)
	}
	res, err := m.List(context.Background(), mailbox.ListOptions{Box: "../home/" + mailbox.SpoolFile})
	if err != nil || res.Counts.Total != 1 {
		t.Errorf("spool holds %+v (%v); want only the filed letter", res.Counts, err)
	}
	_, err = m.List(context.Background(), mailbox.ListOptions{Box: "nowhere.jsonl"})
	if hosterr.KindOf(err) != hosterr.KindInvalid {
		t.Errorf("list a missing box: %v, want KindInvalid", err)
	}
}

// Distribute registers the checkout's box first, so letters naming its
// remote land there; a letter for no known checkout waits, and a second
// run delivers nothing twice.
func TestMailDistributeRegistersCheckout(t *testing.T) {
	f := jobtest.New(t, jobtest.Options{Git: true, Remote: "git@github.com:acme/widgets.git"})
	f.Actor = "claude"
	m := mailer(f, 0)
	for _, repo := range []string{"github.com/acme/widgets", "", "/nowhere/at/all"} {
		if _, err := m.File(context.Background(), mailbox.Letter{Class: "c", What: "about " + repo, Repo: repo}); err != nil {
			t.Fatal(err)
		}
	}
	d, err := m.Distribute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d.Registered != filepath.Join(f.Dir, ".palace", "inbox.jsonl") || d.Delivered != 2 || len(d.Pending) != 1 {
		t.Errorf("distribution %+v", d)
	}
	again, err := m.Distribute(context.Background())
	if err != nil || again.Delivered != 0 || again.AlreadyPresent != 2 {
		t.Errorf("second run %+v %v", again, err)
	}
	sw, err := m.Sweep(context.Background())
	if err != nil || len(sw.Letters) != 3 {
		t.Errorf("sweep %+v %v", sw, err)
	}
	w, err := m.Waiting(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := jsonString(w); !strings.Contains(b, "/nowhere/at/all") {
		t.Errorf("waiting: %s; want the letter no checkout takes", b)
	}
}
