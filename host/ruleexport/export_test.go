package ruleexport_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/authority"
	"github.com/palacehq/palace/host/internal/jobtest"
	"github.com/palacehq/palace/host/ruleexport"
	"github.com/palacehq/palace/internal/hosterr"
	"github.com/palacehq/palace/rulefiles"
	"github.com/palacehq/palace/store"
)

// exporter is the export job over f, built as host builds it.
func exporter(f *jobtest.Fixture) *ruleexport.Exporter {
	return ruleexport.New(ruleexport.Config{Env: f.Env, OpenContests: f.Store.OpenContests})
}

func wantKind(t *testing.T, what string, err error, kind hosterr.Kind, sub string) {
	t.Helper()
	var he *hosterr.Error
	if !errors.As(err, &he) || he.Kind != kind || !strings.Contains(err.Error(), sub) {
		t.Errorf("%s: %v; want kind %v naming %q", what, err, kind, sub)
	}
}

func read(t *testing.T, f *jobtest.Fixture, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.Dir, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The export carries the repository's authoritative cards and nothing
// else: candidates, worktree and global cards stay out unseen; expired and
// contested repository cards are named with the reason they stay out.
func TestExportCarriesTheRepositorysAuthoritativeCards(t *testing.T) {
	ctx := context.Background()
	f := jobtest.New(t, jobtest.Options{Git: true})
	law := seed(t, f, jobtest.Card{Statement: "Never push to main", Tier: domain.TierDaoRen, Status: domain.StatusCanonical, Anchor: domain.AnchorRepo})
	rule := seed(t, f, jobtest.Card{Statement: "Run go vet before a commit", Tier: domain.TierShu, Status: domain.StatusPromoted, Anchor: domain.AnchorRepo})
	seed(t, f, jobtest.Card{Statement: "Maybe squash merges", Tier: domain.TierShu, Anchor: domain.AnchorRepo})
	seed(t, f, jobtest.Card{Statement: "My worktree builds with tags", Tier: domain.TierShu, Status: domain.StatusPromoted, Anchor: domain.AnchorWorktree})
	seed(t, f, jobtest.Card{Statement: "Write in plain words", Tier: domain.TierShu, Status: domain.StatusPromoted, Anchor: domain.AnchorGlobal})
	contested := seed(t, f, jobtest.Card{Statement: "Deploy on Fridays", Tier: domain.TierShu, Status: domain.StatusPromoted, Anchor: domain.AnchorRepo})
	ev := f.Evidence(t, domain.AnchorRepo, "the Friday deploy broke production")
	f.Apply(t, authority.Change{Op: authority.OpContest, CardID: contested.ID, Contest: authority.Contest{Kind: authority.ContestContradiction, Reason: "a Friday deploy broke", EvidenceID: ev.ID}})
	expired := seed(t, f, jobtest.Card{Statement: "Pin the old toolchain", Tier: domain.TierShu, Status: domain.StatusPromoted, Anchor: domain.AnchorRepo})
	past := "2026-03-01"
	f.Apply(t, authority.Change{Op: authority.OpGovern, CardID: expired.ID, Attrs: &store.CardAttrs{ExpiresAt: &past}, From: "", To: past, Reason: "the toolchain moves on"})

	res, err := exporter(f).Export(ctx, ruleexport.Request{Target: "claude-md"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Cards != 2 || res.Root != f.Loc.Worktree || !res.Stale || len(res.Files) != 1 || res.Files[0].Path != "CLAUDE.md" || res.Files[0].Action != "written" {
		t.Fatalf("export: %+v; want CLAUDE.md written with 2 cards", res)
	}
	if len(res.LeftOut) != 2 {
		t.Fatalf("left out: %+v; want the contested and the expired card", res.LeftOut)
	}
	reasons := map[string]string{}
	for _, l := range res.LeftOut {
		reasons[l.ID] = l.Reason
	}
	if r := reasons[contested.ID]; !strings.Contains(r, "contested (contradiction)") || !strings.Contains(r, "resolve or demote it") {
		t.Errorf("contested card's reason: %q", r)
	}
	if r := reasons[expired.ID]; !strings.Contains(r, "expired on 2026-03-01") {
		t.Errorf("expired card's reason: %q", r)
	}
	got := read(t, f, "CLAUDE.md")
	for _, s := range []string{law.Statement, rule.Statement, "palace:begin claude-md"} {
		if !strings.Contains(got, s) {
			t.Errorf("CLAUDE.md lacks %q:\n%s", s, got)
		}
	}
	for _, s := range []string{"squash", "worktree builds", "plain words", "Fridays", "toolchain"} {
		if strings.Contains(got, s) {
			t.Errorf("CLAUDE.md carries %q:\n%s", s, got)
		}
	}
}

// Hand-written text is kept byte for byte, the block added after it; a second export
// changes nothing; check and dry run write nothing and say what is stale.
func TestExportKeepsHandTextAndIsStable(t *testing.T) {
	ctx := context.Background()
	f := jobtest.New(t, jobtest.Options{Git: true})
	seed(t, f, jobtest.Card{Statement: "Never push to main", Tier: domain.TierDaoRen, Status: domain.StatusCanonical, Anchor: domain.AnchorRepo})
	const before, after = "# Widgets\n\nHand-written intro.\n", "\n## Notes\nkept as written\n"
	path := filepath.Join(f.Dir, "AGENTS.md")
	if err := os.WriteFile(path, []byte(before+after), 0o644); err != nil {
		t.Fatal(err)
	}
	e := exporter(f)

	check, err := e.Export(ctx, ruleexport.Request{Target: "agents-md", Check: true})
	if err != nil || !check.Stale || check.Files[0].Action != "stale" {
		t.Fatalf("check before export: %+v, %v; want stale", check, err)
	}
	dry, err := e.Export(ctx, ruleexport.Request{Target: "agents-md", DryRun: true})
	if err != nil || dry.Files[0].Action != "would_write" || !strings.Contains(dry.Files[0].Content, "Never push to main") {
		t.Fatalf("dry run: %+v, %v", dry, err)
	}
	if got := read(t, f, "AGENTS.md"); got != before+after {
		t.Fatalf("check or dry run wrote AGENTS.md:\n%s", got)
	}

	if _, err := e.Export(ctx, ruleexport.Request{Target: "agents-md"}); err != nil {
		t.Fatal(err)
	}
	got := read(t, f, "AGENTS.md")
	if !strings.HasPrefix(got, before+after) || !strings.Contains(got, "Never push to main") {
		t.Errorf("hand-written text not kept:\n%s", got)
	}
	if got != dry.Files[0].Content {
		t.Errorf("written file differs from the dry run's content")
	}
	again, err := e.Export(ctx, ruleexport.Request{Target: "agents-md"})
	if err != nil || again.Stale || again.Files[0].Action != "unchanged" || read(t, f, "AGENTS.md") != got {
		t.Errorf("second export: %+v, %v; want unchanged", again, err)
	}
	if check, err := e.Export(ctx, ruleexport.Request{Target: "agents-md", Check: true}); err != nil || check.Stale {
		t.Errorf("check after export: %+v, %v; want not stale", check, err)
	}
}

// A malformed block is refused with its file and line, and nothing is
// written.
func TestExportRefusesAMalformedBlock(t *testing.T) {
	f := jobtest.New(t, jobtest.Options{Git: true})
	seed(t, f, jobtest.Card{Statement: "Never push to main", Tier: domain.TierDaoRen, Status: domain.StatusCanonical, Anchor: domain.AnchorRepo})
	broken := "intro\n<!-- palace:begin claude-md -->\nold\n"
	if err := os.WriteFile(filepath.Join(f.Dir, "CLAUDE.md"), []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := exporter(f).Export(context.Background(), ruleexport.Request{Target: "claude-md"})
	wantKind(t, "malformed block", err, hosterr.KindInvalid, "palace:begin without a palace:end")
	if got := read(t, f, "CLAUDE.md"); got != broken {
		t.Errorf("a refused export wrote CLAUDE.md:\n%s", got)
	}
}

// Generated Cursor files whose cards are gone are removed; other files in
// the rules directory are left alone.
func TestExportRemovesGeneratedFilesWhoseCardsAreGone(t *testing.T) {
	ctx := context.Background()
	f := jobtest.New(t, jobtest.Options{Git: true})
	c := seed(t, f, jobtest.Card{Statement: "Never push to main", Tier: domain.TierDaoRen, Status: domain.StatusCanonical, Anchor: domain.AnchorRepo})
	e := exporter(f)
	first, err := e.Export(ctx, ruleexport.Request{Target: "cursor"})
	if err != nil || len(first.Files) == 0 {
		t.Fatalf("first export: %+v, %v", first, err)
	}
	dir := filepath.Dir(filepath.Join(f.Dir, filepath.FromSlash(first.Files[0].Path)))
	mine := filepath.Join(dir, "team.mdc")
	if err := os.WriteFile(mine, []byte("a team's own rule\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.Apply(t, authority.Change{Op: authority.OpRetire, CardID: c.ID, Reason: "the branch is protected now"})

	dry, err := e.Export(ctx, ruleexport.Request{Target: "cursor", DryRun: true})
	if err != nil || len(dry.Files) != 1 || dry.Files[0].Action != "would_remove" {
		t.Fatalf("dry run after retiring: %+v, %v; want one would_remove", dry, err)
	}
	res, err := e.Export(ctx, ruleexport.Request{Target: "cursor"})
	if err != nil || res.Cards != 0 || len(res.Files) != 1 || res.Files[0].Action != "removed" || res.Files[0].Path != first.Files[0].Path {
		t.Fatalf("export after retiring: %+v, %v; want %s removed", res, err, first.Files[0].Path)
	}
	if _, err := os.Stat(filepath.Join(f.Dir, filepath.FromSlash(first.Files[0].Path))); !os.IsNotExist(err) {
		t.Errorf("generated file still there: %v", err)
	}
	if _, err := os.Stat(mine); err != nil {
		t.Errorf("the team's own file is gone: %v", err)
	}
}

func TestExportRefusals(t *testing.T) {
	ctx := context.Background()
	f := jobtest.New(t, jobtest.Options{Git: true})
	e := exporter(f)
	for _, c := range []struct {
		req  ruleexport.Request
		want string
	}{
		{ruleexport.Request{}, "--to is required: use " + strings.Join(ruleexport.Targets(), ", ")},
		{ruleexport.Request{Target: "vim"}, `--to "vim" is not a target`},
		{ruleexport.Request{Target: "claude-md", Budget: -1}, "--budget -1 is negative"},
		{ruleexport.Request{Target: "claude-md", Check: true, DryRun: true}, "do not go together"},
	} {
		_, err := e.Export(ctx, c.req)
		wantKind(t, c.want, err, hosterr.KindInvalid, c.want)
	}
	plain := jobtest.New(t, jobtest.Options{})
	_, err := exporter(plain).Export(ctx, ruleexport.Request{Target: "claude-md"})
	wantKind(t, "outside git", err, hosterr.KindInvalid, "is not inside a git checkout")

	// A symbolic link on the way is refused, a file over the limit too.
	outside := filepath.Join(t.TempDir(), "elsewhere.md")
	if err := os.WriteFile(outside, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(f.Dir, "CLAUDE.md")); err != nil {
		t.Fatal(err)
	}
	_, err = e.Export(ctx, ruleexport.Request{Target: "claude-md"})
	wantKind(t, "symbolic link", err, hosterr.KindInvalid, "CLAUDE.md")
	if err := os.WriteFile(filepath.Join(f.Dir, "AGENTS.md"), make([]byte, rulefiles.MaxFileBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = e.Export(ctx, ruleexport.Request{Target: "agents-md"})
	wantKind(t, "file over the limit", err, hosterr.KindInvalid, "over the 1 MiB limit")
}
