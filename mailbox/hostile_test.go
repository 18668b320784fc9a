package mailbox_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/palacehq/palace/mailbox"
)

// A spool whose last line lost its newline (a crash, `printf >> spool`)
// is repaired by the next File: the broken bytes stay as they were, the
// new letter gets a line of its own, distribute and sweep see it, and the
// broken line is reported.
func TestFileRepairsUnterminatedSpool(t *testing.T) {
	for _, c := range []struct {
		name, tail string
		// tailLetter: the unterminated line is a whole letter that only
		// lacked its newline, so after the repair it is read too.
		tailLetter bool
	}{
		{"torn letter", `{"ts":"2025-06-01T12:00:00Z","agent":"a","cla`, false},
		{"letter without newline", letter("typed with printf", ""), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			mb := &mailbox.Mailbox{Home: filepath.Join(t.TempDir(), "home"), Now: fixedNow}
			first := file(t, mb, "first", "")
			f, err := os.OpenFile(mb.SpoolPath(), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(c.tail)
			f.Close()

			filed, err := mb.File(ctx, mailbox.Letter{TS: "2025-06-01T12:00:00Z", Agent: "a", Class: "c", What: "after"})
			if err != nil {
				t.Fatal(err)
			}
			if filed.Repaired != 2 {
				t.Errorf("Repaired = %d, want line 2", filed.Repaired)
			}
			spool := readFile(t, mb.SpoolPath())
			lines := strings.Split(spool, "\n")
			if len(lines) != 4 || lines[0] != first || lines[1] != c.tail || mailbox.ID([]byte(lines[2])) != filed.ID || lines[3] != "" {
				t.Fatalf("spool = %q", spool)
			}
			// A second letter needs no repair.
			if again, err := mb.File(ctx, mailbox.Letter{TS: "2025-06-01T12:00:00Z", Agent: "a", Class: "c", What: "again"}); err != nil || again.Repaired != 0 {
				t.Errorf("second File: repaired %d, %v", again.Repaired, err)
			}

			rep, err := mb.Distribute(ctx)
			if err != nil {
				t.Fatal(err)
			}
			sw, err := mb.Sweep(ctx)
			if err != nil {
				t.Fatal(err)
			}
			ids := map[string]bool{}
			for _, e := range sw.Letters {
				ids[e.ID] = true
			}
			want := 3
			if c.tailLetter {
				want = 4
			}
			if rep.Delivered != want || len(sw.Letters) != want || !ids[filed.ID] || !ids[mailbox.ID([]byte(first))] {
				t.Errorf("delivered %d, swept %d letters %v; want %d with the new one", rep.Delivered, len(sw.Letters), ids, want)
			}
			findings := mailbox.Check(ctx, "spool", []byte(spool), mailbox.CheckOptions{})
			if c.tailLetter {
				if len(findings) != 0 || len(rep.Invalid) != 0 {
					t.Errorf("a repaired whole letter is reported: %v %v", strs(findings), rep.Invalid)
				}
				return
			}
			if len(findings) != 1 || findings[0].Line != 2 || findings[0].Code != mailbox.CodeInvalidJSON {
				t.Errorf("check of the spool: %v, want one PM001 on line 2", strs(findings))
			}
			if len(rep.Invalid) != 1 || rep.Invalid[0].Line != 2 {
				t.Errorf("distribute invalid = %+v, want line 2", rep.Invalid)
			}
		})
	}
}

// Writers racing to append to a spool with a torn last line repair it
// once: no blank line, no letter glued to another, every letter whole.
func TestFileConcurrentRepair(t *testing.T) {
	home := t.TempDir()
	const torn = `{"ts":"2025-06-01T12:00:00Z","agent":"torn`
	if err := os.WriteFile(filepath.Join(home, mailbox.SpoolFile), []byte(torn), 0o600); err != nil {
		t.Fatal(err)
	}
	const goroutines, procs, each = 6, 3, 20
	cmds := startFilers(t, home, procs, each)
	mb := &mailbox.Mailbox{Home: home}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		repaired int
	)
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				f, err := mb.File(context.Background(), bulkyLetter(fmt.Sprint("goroutine", g), i))
				if err != nil {
					t.Error(err)
				}
				if f.Repaired != 0 {
					mu.Lock()
					repaired++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("filer process: %v", err)
		}
	}
	lines := strings.Split(strings.TrimSuffix(readFile(t, mb.SpoolPath()), "\n"), "\n")
	if len(lines) != 1+(goroutines+procs)*each || lines[0] != torn {
		t.Fatalf("%d lines (first %.60q), want the torn line and %d letters", len(lines), lines[0], (goroutines+procs)*each)
	}
	for i, line := range lines[1:] {
		if _, err := mailbox.ParseLine([]byte(line)); err != nil {
			t.Fatalf("line %d: %v", i+2, err)
		}
	}
	if repaired > goroutines {
		t.Errorf("%d goroutine writers repaired the spool, want at most one", repaired)
	}
}

func TestNamesNoProject(t *testing.T) {
	for repo, want := range map[string]bool{
		"": true, "  ": true, "all": true, "ALL": true, " All ": true, "all (every repo)": true,
		"(research task, no repo)": true, "(a) (b)": true, "global": true, "none": true, "n/a": true, "-": true, "*": true,
		"palace": false, "~/src/a": false, "/src/a (worktree x)": false, "github.com/org/all": false,
		"all repos": false, "./all": false, "/all": false, "all\u00a0(x)": true, "\tnone\u00a0": true,
	} {
		if got := mailbox.NamesNoProject(repo); got != want {
			t.Errorf("NamesNoProject(%q) = %v, want %v", repo, got, want)
		}
	}
}

// Letters about every project or none reach the global box; a letter
// naming a project, even one that is not here, never does.
func TestDistributeRoutesProjectlessToGlobal(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	repo := newRepo(t, filepath.Join(root, "r"))
	mb := &mailbox.Mailbox{Home: filepath.Join(root, "home"), Now: fixedNow}
	var global []string
	for _, r := range []string{"all", "(research task, no repo)", "None", "", "*"} {
		global = append(global, file(t, mb, "about "+r, r))
	}
	inRepo := file(t, mb, "about r", repo)
	file(t, mb, "about a name", "palace")
	file(t, mb, "about a missing repo", filepath.Join(root, "gone (worktree x)"))

	rep, err := mb.Distribute(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := readFile(t, mb.GlobalBoxPath()), strings.Join(global, "\n")+"\n"; got != want {
		t.Errorf("global box:\n%s\nwant:\n%s", got, want)
	}
	if got := readFile(t, mailbox.BoxPath(repo)); got != inRepo+"\n" {
		t.Errorf("repo box = %q", got)
	}
	var pending []string
	for _, p := range rep.Pending {
		pending = append(pending, p.Repo)
	}
	if want := []string{"palace", filepath.Join(root, "gone (worktree x)")}; !reflect.DeepEqual(pending, want) {
		t.Errorf("pending %v, want %v", pending, want)
	}
	// The global box passes the global-box rule (PM008) it was routed by.
	if f := mailbox.Check(ctx, "global", []byte(readFile(t, mb.GlobalBoxPath())), mailbox.CheckOptions{Global: true}); len(f) != 0 {
		t.Errorf("check of the global box: %v", strs(f))
	}
	misplaced := letter("project letter", `"repo":"palace (all)"`) + "\n"
	if f := mailbox.Check(ctx, "global", []byte(misplaced), mailbox.CheckOptions{Global: true}); len(f) != 1 || f[0].Code != mailbox.CodeProjectInGlobal {
		t.Errorf("a project letter in the global box: %v, want PM008", strs(f))
	}
}

// A cloned repository whose .palace, or whose box, is a link must not
// make distribute write outside it; the other boxes are still delivered.
func TestDistributeRefusesLinkedBoxes(t *testing.T) {
	for _, c := range []struct {
		name string
		// plant makes the link inside repo pointing at outside; link is
		// the path the refusal must name.
		plant func(t *testing.T, repo, outside string) (link string)
	}{
		{"box is a link to a file", func(t *testing.T, repo, outside string) string {
			link := mailbox.BoxPath(repo)
			symlink(t, filepath.Join(outside, "victim"), link)
			return link
		}},
		{".palace is a link to a directory", func(t *testing.T, repo, outside string) string {
			link := filepath.Join(repo, ".palace")
			symlink(t, outside, link)
			return link
		}},
		{"box is a dangling link", func(t *testing.T, repo, outside string) string {
			link := mailbox.BoxPath(repo)
			symlink(t, filepath.Join(outside, "created-by-palace"), link)
			return link
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			root := t.TempDir()
			repo := newRepo(t, filepath.Join(root, "cloned"))
			good := newRepo(t, filepath.Join(root, "good"))
			outside := filepath.Join(root, "outside")
			writeFile(t, filepath.Join(outside, "victim"), "precious\n")
			link := c.plant(t, repo, outside)
			mb := &mailbox.Mailbox{Home: filepath.Join(root, "home"), Now: fixedNow}
			bad := file(t, mb, "to the cloned repo", repo)
			ok := file(t, mb, "to the good repo", good)

			rep, err := mb.Distribute(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Refused) != 1 || rep.Refused[0].Path != mailbox.BoxPath(repo) ||
				!strings.Contains(rep.Refused[0].Reason, link+" -> ") || !strings.Contains(rep.Refused[0].Reason, "rm "+link) {
				t.Errorf("refused = %+v, want the box naming %s and the fix", rep.Refused, link)
			}
			if len(rep.Pending) != 1 || rep.Pending[0].ID != mailbox.ID([]byte(bad)) {
				t.Errorf("pending = %+v, want the cloned repo's letter", rep.Pending)
			}
			if got := readFile(t, mailbox.BoxPath(good)); got != ok+"\n" {
				t.Errorf("good box = %q", got)
			}
			ents, _ := os.ReadDir(outside)
			if got := readFile(t, filepath.Join(outside, "victim")); got != "precious\n" || len(ents) != 1 {
				t.Errorf("outside changed: victim %q, %d entries", got, len(ents))
			}
			if _, err := os.Stat(mb.GlobalBoxPath()); !errors.Is(err, os.ErrNotExist) {
				t.Error("the refused letter went to the global box")
			}
			// Sweep does not read through the link either.
			if _, err := mb.Register(ctx, repo); err != nil {
				t.Fatal(err)
			}
			sw, err := mb.Sweep(ctx)
			if err != nil {
				t.Fatal(err)
			}
			unreachable := false
			for _, u := range sw.Unreachable {
				unreachable = unreachable || (u.Path == mailbox.BoxPath(repo) && strings.Contains(u.Reason, "symbolic link"))
			}
			if !unreachable {
				t.Errorf("sweep unreachable = %+v, want the linked box", sw.Unreachable)
			}
		})
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
