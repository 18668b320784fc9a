package mailbox_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/palacehq/palace/mailbox"
)

func TestStagedCheck(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t, filepath.Join(t.TempDir(), "r"))
	rel := ".palace/inbox.jsonl"
	box := filepath.Join(repo, rel)
	a, b, c := letter("a", ""), letter("b", ""), letter("c", "")
	check := func() []string {
		t.Helper()
		got, err := mailbox.StagedCheck(ctx, repo, []string{rel}, mailbox.CheckOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return strs(got)
	}

	// A new box: no history yet, content still checked.
	writeFile(t, box, a+"\n{bad\n")
	git(t, repo, "add", rel)
	if got := check(); len(got) != 1 || got[0] != rel+`:2:2: PM001 invalid JSON: invalid character 'b' looking for beginning of object key string` {
		t.Errorf("new box: %v", got)
	}
	writeFile(t, box, a+"\n"+b+"\n")
	git(t, repo, "add", rel)
	git(t, repo, "commit", "-q", "-m", "box")

	// Appending is fine.
	writeFile(t, box, a+"\n"+b+"\n"+c+"\n")
	git(t, repo, "add", rel)
	if got := check(); len(got) != 0 {
		t.Errorf("append: %v", got)
	}

	// Rewriting a committed line is caught in the index...
	writeFile(t, box, c+"\n"+b+"\n")
	git(t, repo, "add", rel)
	want := rel + ":1:1: PM006 line 1 rewrites committed history: letter " + mailbox.ID([]byte(a)) + " was replaced by " + mailbox.ID([]byte(c)) + "; boxes are append-only: restore the line and add a new letter at the end"
	if got := check(); len(got) != 1 || got[0] != want {
		t.Errorf("rewrite: %v\nwant %s", got, want)
	}
	// ...while the working tree, not what is committed, does not count.
	writeFile(t, box, a+"\n"+b+"\n")
	if got := check(); len(got) != 1 {
		t.Errorf("unstaged fix must not hide the staged rewrite: %v", got)
	}

	// An absolute path works too, and a deleted box is one finding.
	git(t, repo, "rm", "-q", "-f", "--cached", rel)
	got, err := mailbox.StagedCheck(ctx, repo, []string{box}, mailbox.CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Code != mailbox.CodeHistory || got[0].Path != box {
		t.Errorf("deleted: %v", strs(got))
	}

	// Untracked everywhere: an error, not a silent pass.
	writeFile(t, filepath.Join(repo, "other.jsonl"), a+"\n")
	if _, err := mailbox.StagedCheck(ctx, repo, []string{"other.jsonl"}, mailbox.CheckOptions{}); !errors.Is(err, mailbox.ErrNotStaged) {
		t.Errorf("untracked: %v", err)
	}
	if _, err := mailbox.StagedCheck(ctx, t.TempDir(), []string{"x"}, mailbox.CheckOptions{}); err == nil || errors.Is(err, mailbox.ErrNotStaged) {
		t.Errorf("outside a repository: %v", err)
	}
}
