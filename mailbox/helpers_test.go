package mailbox_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/palacehq/palace/mailbox"
)

// The test binary doubles as a letter-filing process for the O_APPEND test:
// with PALACE_TEST_FILER set it files letters into PALACE_TEST_HOME and
// exits, without running any test.
func TestMain(m *testing.M) {
	if who := os.Getenv("PALACE_TEST_FILER"); who != "" {
		os.Exit(fileLetters(os.Getenv("PALACE_TEST_HOME"), who, atoi(os.Getenv("PALACE_TEST_COUNT"))))
	}
	os.Exit(m.Run())
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

func fileLetters(home, who string, n int) int {
	mb := &mailbox.Mailbox{Home: home}
	for i := range n {
		if _, err := mb.File(context.Background(), bulkyLetter(who, i)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

// bulkyLetter is big enough (≈8 KiB) that a torn or interleaved write
// would show.
func bulkyLetter(who string, i int) mailbox.Letter {
	return mailbox.Letter{
		TS: "2025-06-01T12:00:00Z", Agent: who, Class: "load",
		What:    fmt.Sprintf("letter %d from %s", i, who),
		Snippet: strings.Repeat(fmt.Sprintf("%s-%d|", who, i), 8000/(len(who)+8)),
	}
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@e", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// newRepo makes a git repository with one commit at dir.
func newRepo(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "init", "-q", "-b", "main")
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "init")
	canon, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return canon
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func fixedNow() time.Time { return time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC) }
