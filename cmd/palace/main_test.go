package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// palaceBin is the real binary, built once for the package's tests.
var palaceBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "palace-cli-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	palaceBin = filepath.Join(dir, "palace")
	build := exec.Command("go", "build", "-o", palaceBin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build palace: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// env is one isolated palace: a home and a git checkout to run in.
type env struct {
	t    testing.TB
	home string
	dir  string
	vars []string
}

func newEnv(t testing.TB) *env {
	t.Helper()
	root := t.TempDir()
	e := &env{t: t, home: filepath.Join(root, "home"), dir: filepath.Join(root, "repo")}
	if err := os.MkdirAll(e.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	e.git("init", "-q", "-b", "main")
	e.git("remote", "add", "origin", "git@github.com:acme/widgets.git")
	e.git("commit", "-q", "--allow-empty", "-m", "init")
	return e
}

func (e *env) git(args ...string) string {
	e.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = e.dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e")
	out, err := cmd.CombinedOutput()
	if err != nil {
		e.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

type result struct {
	stdout, stderr string
	code           int
}

// run runs the real binary in e.dir with e.home.
func (e *env) run(args ...string) result {
	e.t.Helper()
	return e.runIn(e.dir, nil, args...)
}

func (e *env) runIn(dir string, stdin []byte, args ...string) result {
	e.t.Helper()
	cmd := exec.Command(palaceBin, args...)
	cmd.Dir = dir
	cmd.Env = append(filteredEnv(), "PALACE_HOME="+e.home, "USER=tester", "NO_COLOR=1")
	cmd.Env = append(cmd.Env, e.vars...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatalf("run palace %v: %v", args, err)
	}
	return result{out.String(), errb.String(), code}
}

func filteredEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PALACE_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// ok runs a command that must succeed and returns stdout.
func (e *env) ok(args ...string) string {
	e.t.Helper()
	r := e.run(args...)
	if r.code != 0 {
		e.t.Fatalf("palace %v: exit %d\nstdout: %s\nstderr: %s", args, r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// jsonOf runs a command with --format json and decodes stdout.
func (e *env) jsonOf(args ...string) map[string]any {
	e.t.Helper()
	out := e.ok(append(args, "--format", "json")...)
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		e.t.Fatalf("palace %v: stdout is not JSON: %v\n%s", args, err, out)
	}
	return v
}

func (e *env) record(content string, extra ...string) string {
	e.t.Helper()
	return e.jsonOf(append([]string{"record", "--content", content}, extra...)...)["id"].(string)
}

func (e *env) distill(statement, tier string, extra ...string) string {
	e.t.Helper()
	return e.jsonOf(append([]string{"distill", "--statement", statement, "--tier", tier}, extra...)...)["id"].(string)
}

func wantCode(t *testing.T, r result, code int, stderrHas ...string) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, code, r.stdout, r.stderr)
	}
	for _, s := range stderrHas {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("stderr %q does not mention %q", r.stderr, s)
		}
	}
}
