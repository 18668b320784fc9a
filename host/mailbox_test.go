package host_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/intake"
	"github.com/palacehq/palace/host/mail"
	"github.com/palacehq/palace/mailbox"
	"github.com/palacehq/palace/policies"
)

// mailEnv is a palace home and one git checkout (no commits made by the
// helpers beyond the first).
type mailEnv struct {
	t    *testing.T
	home string
	repo string
}

func newMailEnv(t *testing.T) *mailEnv {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := &mailEnv{t: t, home: filepath.Join(root, "home"), repo: filepath.Join(root, "repo")}
	if err := os.MkdirAll(e.repo, 0o755); err != nil {
		t.Fatal(err)
	}
	e.git("init", "-q", "-b", "main")
	e.git("commit", "-q", "--allow-empty", "-m", "init")
	return e
}

func (e *mailEnv) git(args ...string) {
	e.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	cmd.Dir = e.repo
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		e.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func (e *mailEnv) write(rel, content string) string {
	e.t.Helper()
	p := filepath.Join(e.repo, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

func (e *mailEnv) mail(opts host.Options) *mail.Mail {
	e.t.Helper()
	opts.Home, opts.Cwd = e.home, cmpOr(opts.Cwd, e.repo)
	m, err := host.OpenMail(context.Background(), opts)
	if err != nil {
		e.t.Fatal(err)
	}
	return m
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func mailLetter(what, extra string) string {
	if extra != "" {
		extra = "," + extra
	}
	return fmt.Sprintf(`{"ts":"2025-06-01T12:00:00Z","agent":"claude","class":"tool_error","what":%q%s}`, what, extra)
}

func findingStrings(fs []mailbox.Finding) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.String()
	}
	return out
}

func wantFindings(t *testing.T, got []mailbox.Finding, want ...string) {
	t.Helper()
	if g, w := strings.Join(findingStrings(got), "\n"), strings.Join(want, "\n"); g != w {
		t.Errorf("findings:\n%s\nwant:\n%s", g, w)
	}
}

const teamMailbox = `package palace.mailbox

import rego.v1

deny contains "PM120: tool_error letters must name the tool" if {
	input.letter.class == "tool_error"
	not input.letter.tool
}

deny contains sprintf("%s box, line %d: external letters need a reference", [input.box, input.line]) if {
	input.letter.external == true
}
`

func TestMailRulesTeamPolicy(t *testing.T) {
	e := newMailEnv(t)
	e.write(".palace/policies/mailbox.rego", teamMailbox)
	box := mailLetter("hung", `"tool":"bash"`) + "\n" + mailLetter("no tool", "") + "\n" + mailLetter("tracked", `"tool":"x","external":true`) + "\n"
	e.write(".palace/inbox.jsonl", box)
	m := e.mail(host.Options{})
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
}

func TestMailRulesEmbeddedDefaultIsSkipped(t *testing.T) {
	def, err := os.ReadFile("../policies/default/mailbox.rego")
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
			e := newMailEnv(t)
			for f, body := range files {
				e.write(filepath.Join(".palace/policies", f), body)
			}
			e.write(".palace/inbox.jsonl", mailLetter("x", "")+"\n")
			m := e.mail(host.Options{})
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
			e := newMailEnv(t)
			e.write(".palace/policies/mailbox.rego", tt.policy)
			e.write("a.jsonl", mailLetter("x", `"repo":"github.com/a/b"`)+"\n"+mailLetter("y", "")+"\n")
			rep, err := e.mail(host.Options{}).Check(context.Background(), mail.CheckRequest{Paths: []string{"a.jsonl"}})
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
	e := newMailEnv(t)
	e.write(".palace/policies/mailbox.rego", "package palace.mailbox\n\nimport rego.v1\n\n"+
		`deny contains "x" if count([x | some i in numbers.range(1, 100000000); x := i]) > 0`+"\n")
	var box strings.Builder
	for i := range 200 {
		box.WriteString(mailLetter(fmt.Sprint("letter ", i), "") + "\n")
	}
	e.write("a.jsonl", box.String())
	m := e.mail(host.Options{PolicyTimeout: 5 * time.Millisecond})
	rep, err := m.Check(context.Background(), mail.CheckRequest{Paths: []string{"a.jsonl"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 11 || !strings.Contains(rep.Findings[10].Message, "for this and 189 more letters") ||
		!strings.Contains(rep.Findings[0].Message, "deadline") {
		t.Errorf("findings:\n%s", strings.Join(findingStrings(rep.Findings), "\n"))
	}
}

func TestMailCheckStagedDefaults(t *testing.T) {
	e := newMailEnv(t)
	first := mailLetter("first", `"tool":"bash"`) + "\n"
	e.write(".palace/inbox.jsonl", first)
	e.write("sub/.palace/inbox.jsonl", first)
	e.git("add", ".")
	e.git("commit", "-q", "-m", "boxes")
	m := e.mail(host.Options{})

	// Nothing staged: nothing to check.
	if rep, err := m.Check(context.Background(), mail.CheckRequest{Staged: true}); err != nil || len(rep.Checked) != 0 {
		t.Fatalf("nothing staged: %+v %v", rep, err)
	}
	// A clean append in one box, a rewrite in the other.
	e.write(".palace/inbox.jsonl", first+mailLetter("second", "")+"\n")
	e.write("sub/.palace/inbox.jsonl", mailLetter("first, edited", "")+"\n")
	e.git("add", ".")
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
	sub := e.mail(host.Options{Cwd: filepath.Join(e.repo, "sub")})
	rep, err = sub.Check(context.Background(), mail.CheckRequest{Staged: true})
	if err != nil || strings.Join(rep.Checked, ",") != "../.palace/inbox.jsonl,.palace/inbox.jsonl" || rep.Errors != 1 {
		t.Errorf("from sub: %+v %v", rep, err)
	}
}

func TestMailCheckErrors(t *testing.T) {
	e := newMailEnv(t)
	m := e.mail(host.Options{})
	_, err := m.Check(context.Background(), mail.CheckRequest{Paths: []string{"nope.jsonl"}})
	if host.KindOf(err) != host.KindInvalid || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	e.write("untracked.jsonl", "")
	_, err = m.Check(context.Background(), mail.CheckRequest{Paths: []string{"untracked.jsonl"}, Staged: true})
	if host.KindOf(err) != host.KindInvalid || !errors.Is(err, mailbox.ErrNotStaged) {
		t.Errorf("untracked file: %v", err)
	}
	plain := filepath.Join(filepath.Dir(e.repo), "plain")
	if err := os.MkdirAll(plain, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = e.mail(host.Options{Cwd: plain}).Check(context.Background(), mail.CheckRequest{Staged: true})
	if host.KindOf(err) != host.KindInvalid || !strings.Contains(err.Error(), "not inside a git checkout") {
		t.Errorf("--staged outside git: %v", err)
	}
}

func TestMailCheckGlobalBox(t *testing.T) {
	e := newMailEnv(t)
	m := e.mail(host.Options{})
	global := m.Mailbox().GlobalBoxPath()
	if err := os.MkdirAll(e.home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(global, []byte(mailLetter("project letter", `"repo":"github.com/a/b"`)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rep, err := m.Check(context.Background(), mail.CheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Checked) != 1 || rep.Checked[0] != global || rep.Errors != 1 || rep.Findings[0].Code != mailbox.CodeProjectInGlobal {
		t.Errorf("global box: %+v", rep)
	}
}

func TestMailFile(t *testing.T) {
	e := newMailEnv(t)
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	m := e.mail(host.Options{Actor: "claude", Now: func() time.Time { return now }})
	filed, err := m.File(context.Background(), mailbox.Letter{Class: "tool_error", What: "hung", Repo: "."})
	if err != nil {
		t.Fatal(err)
	}
	if filed.Letter.Agent != "claude" || filed.Letter.Repo != e.repo || filed.Letter.TS != "2025-06-01T12:00:00.000Z" {
		t.Errorf("filed %+v", filed.Letter)
	}
	_, err = m.File(context.Background(), mailbox.Letter{What: "no class"})
	var he *host.Error
	if !errors.As(err, &he) || he.Kind != host.KindInvalid || he.Field != "class" {
		t.Errorf("missing class: %#v", err)
	}
	_, err = m.File(context.Background(), mailbox.Letter{Class: "leak", What: "key AKIAIOSFODNN7EXAMPLF in the log"})
	if host.KindOf(err) != host.KindDenied || !strings.Contains(err.Error(), "AKIA************MPLF") || strings.Contains(err.Error(), "AKIAIOSFODNN7EXAMPLF") {
		t.Errorf("secret: %v", err)
	}
	res, err := m.List(context.Background(), mailbox.ListOptions{Box: "../home/" + mailbox.SpoolFile})
	if err != nil || res.Counts.Total != 1 {
		t.Errorf("spool holds %+v (%v); want only the filed letter", res.Counts, err)
	}
}

func TestMailDistributeRegistersCheckout(t *testing.T) {
	e := newMailEnv(t)
	e.git("remote", "add", "origin", "git@github.com:acme/widgets.git")
	m := e.mail(host.Options{Actor: "claude"})
	for _, repo := range []string{"github.com/acme/widgets", "", "/nowhere/at/all"} {
		if _, err := m.File(context.Background(), mailbox.Letter{Class: "c", What: "about " + repo, Repo: repo}); err != nil {
			t.Fatal(err)
		}
	}
	d, err := m.Distribute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d.Registered != filepath.Join(e.repo, ".palace", "inbox.jsonl") || d.Delivered != 2 || len(d.Pending) != 1 {
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
}

// OpenMail creates nothing: a hook run on a machine without a palace leaves
// no home behind.
func TestOpenMailCreatesNothing(t *testing.T) {
	e := newMailEnv(t)
	e.write(".palace/inbox.jsonl", mailLetter("x", `"tool":"t"`)+"\n")
	m := e.mail(host.Options{})
	if _, err := m.Check(context.Background(), mail.CheckRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(e.home); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("home was created: %v", err)
	}
}

// A letter addressed to a remote the palace holds memory of is delivered
// into that repository's checkout by a distribute run from anywhere, once
// the directory is still a checkout of that remote; doctor counts the
// letters waiting before the run, and those no known checkout takes.
func TestMailDistributeFindsCheckoutsThePalaceKnows(t *testing.T) {
	e := newMailEnv(t)
	ctx := context.Background()
	e.git("remote", "add", "origin", "git@github.com:acme/widgets.git")
	moved := filepath.Join(filepath.Dir(e.repo), "moved")
	for _, dir := range []string{e.repo, moved} {
		if dir == moved {
			if err := os.MkdirAll(moved, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"init", "-q"}, {"remote", "add", "origin", "https://github.com/acme/gadgets.git"}} {
				cmd := exec.Command("git", args...)
				cmd.Dir = moved
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("git %v: %v\n%s", args, err, out)
				}
			}
		}
		// Memory of the repository records its anchor, with its path.
		h, err := host.Open(ctx, host.Options{Home: e.home, Cwd: dir, Actor: "t"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.Intake().Record(ctx, intake.RecordRequest{Content: "seen in " + dir, Anchor: "repo"}); err != nil {
			t.Fatal(err)
		}
		h.Close()
	}
	// The second checkout now points elsewhere: its directory no longer
	// holds github.com/acme/gadgets.
	cmd := exec.Command("git", "remote", "set-url", "origin", "https://github.com/acme/other.git")
	cmd.Dir = moved
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	elsewhere := t.TempDir()
	m := e.mail(host.Options{Actor: "claude", Cwd: elsewhere})
	for _, repo := range []string{"github.com/ACME/Widgets", "https://github.com/acme/gadgets", "github.com/nobody/here"} {
		if _, err := m.File(ctx, mailbox.Letter{Class: "c", What: "about " + repo, Repo: repo}); err != nil {
			t.Fatal(err)
		}
	}
	mailCheck := func() host.Check {
		for _, c := range host.Doctor(ctx, host.Options{Home: e.home, Cwd: elsewhere}).Checks {
			if c.Name == "mailbox" {
				return c
			}
		}
		t.Fatal("doctor has no mailbox check")
		return host.Check{}
	}
	c := mailCheck()
	if c.Status != "warn" || !strings.Contains(c.Detail, "1 letter for boxes palace can reach") ||
		!strings.Contains(c.Detail, "2 letters for repositories with no known checkout here") || !strings.Contains(c.Fix, "palace mailbox distribute") {
		t.Errorf("doctor before distributing: %+v", c)
	}
	d, err := m.Distribute(ctx)
	if err != nil {
		t.Fatal(err)
	}
	box := filepath.Join(e.repo, ".palace", "inbox.jsonl")
	if d.Delivered != 1 || len(d.Pending) != 2 || len(d.Boxes) != 1 || d.Boxes[0].Path != box {
		t.Fatalf("distribution %+v", d)
	}
	if b, err := os.ReadFile(box); err != nil || !strings.Contains(string(b), "about github.com/ACME/Widgets") {
		t.Errorf("box %s: %q %v", box, b, err)
	}
	if _, err := os.Stat(filepath.Join(moved, ".palace")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a letter was written into a directory that is no longer a checkout of its remote: %v", err)
	}
	c = mailCheck()
	if c.Status != "warn" || strings.Contains(c.Detail, "boxes palace can reach") || !strings.Contains(c.Detail, "github.com/nobody/here") {
		t.Errorf("doctor after distributing: %+v", c)
	}
}
