package anchor_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/palacehq/palace/anchor"
	"github.com/palacehq/palace/domain"
)

func TestNormalizeRemote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"git@github.com:Org/Name.git", "github.com/org/name"},
		{"https://github.com/Org/Name.git", "github.com/org/name"},
		{"https://user:pw@GitHub.com/Org/Name/", "github.com/org/name"},
		{"ssh://git@github.com:22/Org/Name.git", "github.com/org/name"},
		{"https://gitlab.com/Group/Sub/Proj.git", "gitlab.com/group/sub/proj"},
		{"git@bitbucket.org:Team/Repo.git", "bitbucket.org/team/repo"},
		// A self-hosted server may tell cases apart: its path keeps them.
		{"gitlab.example.com:group/sub/proj.git", "gitlab.example.com/group/sub/proj"},
		{"https://git.example.com/ACME/X.git", "git.example.com/ACME/X"},
		{"/srv/git/proj.git", ""},
		{"file:///srv/git/proj.git", ""},
		{"../proj", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := anchor.NormalizeRemote(tt.in); got != tt.want {
			t.Errorf("NormalizeRemote(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func run(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
}

func newRepo(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, dir, "git", "init", "-q", "-b", "main")
	run(t, dir, "git", "commit", "-q", "--allow-empty", "-m", "init")
	return dir
}

func TestWorktreesShareRepoAnchor(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t)
	wt := filepath.Join(filepath.Dir(repo), "wt2")
	run(t, repo, "git", "worktree", "add", "-q", wt)
	if err := os.MkdirAll(filepath.Join(wt, "sub", "dir"), 0o755); err != nil {
		t.Fatal(err)
	}

	a, err := anchor.Resolve(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	b, err := anchor.Resolve(ctx, filepath.Join(wt, "sub", "dir"))
	if err != nil {
		t.Fatal(err)
	}
	if !a.InGit || !b.InGit {
		t.Fatalf("InGit = %v, %v; want both true", a.InGit, b.InGit)
	}
	if got, want := a.Identity(domain.AnchorRepo), b.Identity(domain.AnchorRepo); got != want {
		t.Errorf("repo identity differs between worktrees: %q vs %q", got, want)
	}
	if a.Identity(domain.AnchorWorktree) == b.Identity(domain.AnchorWorktree) {
		t.Errorf("worktree identity equal for two worktrees: %q", a.Identity(domain.AnchorWorktree))
	}
	canonWT, _ := filepath.EvalSymlinks(wt)
	if b.Worktree != canonWT {
		t.Errorf("worktree = %q, want %q", b.Worktree, canonWT)
	}

	// With an origin remote both worktrees take the normalized remote.
	run(t, repo, "git", "remote", "add", "origin", "git@github.com:acme/widgets.git")
	a, _ = anchor.Resolve(ctx, repo)
	b, _ = anchor.Resolve(ctx, wt)
	for _, l := range []anchor.Location{a, b} {
		if got, want := l.Identity(domain.AnchorRepo), "repo:github.com/acme/widgets"; got != want {
			t.Errorf("repo identity = %q, want %q", got, want)
		}
	}
}

func TestOutsideGitIsGlobal(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(dir))
	loc, err := anchor.Resolve(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if loc.InGit || loc.Innermost() != domain.AnchorGlobal {
		t.Fatalf("outside git: InGit=%v innermost=%v", loc.InGit, loc.Innermost())
	}
	if got := loc.Identity(domain.AnchorWorktree); got != anchor.GlobalIdentity {
		t.Errorf("worktree identity outside git = %q, want global", got)
	}
}

func TestSymlinkedCheckoutIsCanonical(t *testing.T) {
	repo := newRepo(t)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(repo, link); err != nil {
		t.Fatal(err)
	}
	a, _ := anchor.Resolve(context.Background(), repo)
	b, _ := anchor.Resolve(context.Background(), link)
	if a.Identity(domain.AnchorWorktree) != b.Identity(domain.AnchorWorktree) {
		t.Errorf("symlink changes worktree identity: %q vs %q", a.Identity(domain.AnchorWorktree), b.Identity(domain.AnchorWorktree))
	}
}

func TestMissingDir(t *testing.T) {
	if _, err := anchor.Resolve(context.Background(), filepath.Join(t.TempDir(), "nope")); err == nil {
		t.Fatal("want error for a missing directory")
	}
}

func TestReconcile(t *testing.T) {
	loc := anchor.Location{InGit: true, Worktree: "/w", RepoIdentity: "github.com/acme/x"}
	for _, tt := range []struct {
		name          string
		known         []string
		want          string
		wantAliases   []string
		visibleAliasN int
	}{
		{"new palace", nil, "github.com/acme/x", nil, 0},
		{"already folded", []string{"github.com/acme/x"}, "github.com/acme/x", nil, 0},
		{"recorded in another case", []string{"github.com/ACME/X"}, "github.com/ACME/X", nil, 0},
		{"two spellings, the folded one among them", []string{"github.com/ACME/X", "github.com/acme/x"}, "github.com/acme/x", []string{"github.com/ACME/X"}, 1},
		{"two old spellings", []string{"github.com/ACME/X", "github.com/Acme/X"}, "github.com/ACME/X", []string{"github.com/Acme/X"}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := loc.Reconcile(tt.known)
			if got.RepoIdentity != tt.want || !slices.Equal(got.RepoAliases, tt.wantAliases) {
				t.Fatalf("Reconcile(%v) = %q aliases %v, want %q aliases %v", tt.known, got.RepoIdentity, got.RepoAliases, tt.want, tt.wantAliases)
			}
			ids := got.ChainIDs()
			if len(ids) != 3+tt.visibleAliasN {
				t.Fatalf("chain %v, want %d ids", ids, 3+tt.visibleAliasN)
			}
			for _, a := range tt.wantAliases {
				if k := got.KindOf(anchor.ID("repo:" + a)); k != domain.AnchorRepo {
					t.Errorf("KindOf(alias %s) = %q, want repo", a, k)
				}
			}
		})
	}
	if !anchor.FoldsCase("github.com/acme/x") || anchor.FoldsCase("git.example.com/ACME/X") || anchor.FoldsCase("/srv/repo") {
		t.Error("FoldsCase is wrong about github.com, a self-hosted server or a path")
	}
}
