package mail_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/palacehq/palace/anchor"
	"github.com/palacehq/palace/host/internal/jobtest"
	"github.com/palacehq/palace/host/mail"
	"github.com/palacehq/palace/mailbox"
	"github.com/palacehq/palace/policies"
)

// mailer is the mailbox front end of f, built as host builds it: policies
// load from $PALACE_HOME/policies and the checkout's .palace/policies
// with an evaluation deadline of timeout (0 for the default), on first
// need.
func mailer(f *jobtest.Fixture, timeout time.Duration) *mail.Mail {
	src := func() policies.Sources {
		s := policies.Sources{HomeDir: filepath.Join(f.Home, "policies")}
		if f.Loc.InGit {
			s.RepoDir, s.RepoRoot = filepath.Join(f.Loc.Worktree, ".palace", "policies"), f.Loc.Worktree
		}
		return s
	}
	env := f.Env
	env.Policies = func(ctx context.Context) (*policies.Set, error) {
		return policies.Load(ctx, src(), policies.Options{Timeout: timeout})
	}
	return mail.New(mail.Config{Env: env, Home: f.Home, PolicySources: src})
}

// at is f seen from directory dir (a subdirectory of its checkout, say).
func at(t *testing.T, f *jobtest.Fixture, dir string) *jobtest.Fixture {
	t.Helper()
	loc, err := anchor.Resolve(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	g := *f
	g.Env.Loc = loc
	return &g
}

// write writes content to rel below f's workspace and returns its path.
func write(t *testing.T, f *jobtest.Fixture, rel, content string) string {
	t.Helper()
	p := filepath.Join(f.Dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func letter(what, extra string) string {
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

func jsonString(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}
