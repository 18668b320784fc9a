package benchgen_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/palacehq/palace/benchgen"
	"github.com/palacehq/palace/host"
)

// small is a palace that generates in about a second, with a history.
var small = benchgen.Spec{Cards: 300, Evidence: 2000, Links: 900, Repos: 3, Worktrees: 6, Seed: 5, Events: 1000, Requests: 600, Days: 60}

// gitRepo makes a git checkout in dir (repository 0 of a generated palace).
func gitRepo(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{{"init", "-q"}, {"remote", "add", "origin", "https://github.com/bench/repo-00"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

func open(t *testing.T, home, cwd string, mode host.Mode) *host.Host {
	t.Helper()
	h, err := host.Open(context.Background(), host.Options{Home: home, Cwd: cwd, Mode: mode, Now: func() time.Time { return benchgen.Epoch }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// TestPalaceIsDeterministic: two palaces of one spec at the same checkout
// path hold the same cards (ids, which carry random bits, aside), and the
// cache marker records what was written.
func TestPalaceIsDeterministic(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	dir := filepath.Join(base, "palace")
	type row struct{ Statement, Tier, Status, Anchor, Field, Created string }
	var runs [][]row
	for range 2 {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		home, repo, err := benchgen.Palace(ctx, dir, small, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		h := open(t, home, repo, host.Human)
		cards, err := h.ListCards(ctx, host.CardFilter{Anchor: "all", AllRepos: true, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if len(cards) != small.Cards {
			t.Fatalf("listed %d cards, want %d", len(cards), small.Cards)
		}
		var rows []row
		for _, c := range cards {
			rows = append(rows, row{c.Statement, string(c.Tier), string(c.Status), c.AnchorID, c.Field, c.CreatedAt})
		}
		runs = append(runs, rows)

		raw, err := os.ReadFile(filepath.Join(dir, "complete.json"))
		if err != nil {
			t.Fatal(err)
		}
		var st benchgen.Stats
		if err := json.Unmarshal(raw, &st); err != nil {
			t.Fatal(err)
		}
		if st.Cards != small.Cards || st.Requests != small.Requests || st.Links == 0 || st.Anchors != 1+small.Repos+small.Worktrees {
			t.Fatalf("stats %+v do not match spec %+v", st, small)
		}
	}
	if len(runs[0]) != len(runs[1]) {
		t.Fatalf("%d cards, then %d", len(runs[0]), len(runs[1]))
	}
	for i := range runs[0] {
		if runs[0][i] != runs[1][i] {
			t.Fatalf("card %d differs between two generations of one spec:\n%+v\n%+v", i, runs[0][i], runs[1][i])
		}
	}
}

// TestGenerateRefuses: agent mode, a palace that holds anything, a bad
// spec and a directory outside git are refused with their kinds, and write
// nothing.
func TestGenerateRefuses(t *testing.T) {
	ctx := context.Background()
	repo := t.TempDir()
	gitRepo(t, repo)
	tiny := benchgen.Spec{Cards: 10, Evidence: 20, Links: 20, Repos: 1, Worktrees: 1, Seed: 1}

	if _, err := benchgen.Generate(ctx, open(t, t.TempDir(), repo, host.Agent), tiny, nil); host.KindOf(err) != host.KindMode {
		t.Fatalf("agent mode: %v, want KindMode", err)
	}
	bad := tiny
	bad.Worktrees = 0
	if _, err := benchgen.Generate(ctx, open(t, t.TempDir(), repo, host.Human), bad, nil); host.KindOf(err) != host.KindInvalid {
		t.Fatalf("bad spec: %v, want KindInvalid", err)
	}
	if _, err := benchgen.Generate(ctx, open(t, t.TempDir(), t.TempDir(), host.Human), tiny, nil); host.KindOf(err) != host.KindInvalid {
		t.Fatalf("outside git: %v, want KindInvalid", err)
	}

	h := open(t, t.TempDir(), repo, host.Human)
	var stages []string
	st, err := benchgen.Generate(ctx, h, tiny, func(p benchgen.Progress) {
		if p.Done == p.Total {
			stages = append(stages, p.Stage)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.Cards != 10 || len(stages) < 2 {
		t.Fatalf("stats %+v, finished stages %v", st, stages)
	}
	if _, err := benchgen.Generate(ctx, h, tiny, nil); host.KindOf(err) != host.KindInvalid {
		t.Fatalf("second run into the same palace: %v, want KindInvalid", err)
	}
	cards, err := h.ListCards(ctx, host.CardFilter{Anchor: "all", AllRepos: true, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(cards) != 10 {
		t.Fatalf("%d cards after a refused second run, want the first run's 10", len(cards))
	}
}

// TestKeysStay: the cache keys of the standard palaces are those the
// cached palaces were generated under; a changed key means regenerating.
func TestKeysStay(t *testing.T) {
	for _, c := range []struct {
		spec benchgen.Spec
		key  string
	}{
		{benchgen.Spec10k, "v3-10000c-100000e-300000l-50r-200w-30000q-s1"},
		{benchgen.Spec100k, "v3-100000c-1000000e-3000000l-50r-200w-300000q-s1"},
		{benchgen.Spec10k.WithYear(), "v3-10000c-100000e-300000l-50r-200w-30000q-s1-200000h365d-hv2"},
	} {
		if got := c.spec.Key(); got != c.key {
			t.Errorf("key %s, want %s", got, c.key)
		}
	}
}
