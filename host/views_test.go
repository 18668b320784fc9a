package host_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/intake"
	"github.com/palacehq/palace/host/pack"
)

// viewsHost opens a human host in a fresh git checkout with a fixed clock.
func viewsHost(t *testing.T) *host.Host {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(dir, "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "init", "-q")
	cmd.Dir = repo
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	h, err := host.Open(context.Background(), host.Options{Home: filepath.Join(dir, "home"), Cwd: repo, Mode: host.Human, Actor: "tester", Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// viewsCard writes a promoted card scoped to store/** Go files.
func viewsCard(t *testing.T, h *host.Host, statement, tier string, trig domain.Trigger) string {
	t.Helper()
	ctx := context.Background()
	var ids []string
	for _, what := range []string{"seen", "verified"} {
		ev, err := h.Intake().Record(ctx, intake.RecordRequest{Content: what + ": " + statement, Field: "storage"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ev.ID)
	}
	c, err := h.Distill(ctx, intake.DistillRequest{
		Statement: statement, Tier: tier, Field: "storage", Supporting: ids[:1], Verification: ids[1:],
		Scope: domain.Scope{Paths: []string{"store/**"}, Languages: []string{"go"}}, Trigger: trig,
		Direct: true, Status: "promoted",
	})
	if err != nil {
		t.Fatalf("distill %q: %v", statement, err)
	}
	return c.ID
}

// TestEditorViewsHoverAndLens: a hover lists the cards whose pattern
// matches the cursor's line, then those tagged with the word, with their
// evidence counts, then the file's pack by tier exactly as Host.Context
// packs it; the lens counts the same pack; what is cached stays until
// Reset.
func TestEditorViewsHoverAndLens(t *testing.T) {
	ctx := context.Background()
	h := viewsHost(t)
	pat := viewsCard(t, h, "Wrap db.Exec calls in a retry on SQLITE_BUSY", "shu", domain.Trigger{Patterns: []string{`db\.Exec\(`}})
	tag := viewsCard(t, h, "Keep one sqlite connection per writer", "qi", domain.Trigger{Intents: []string{"sqlite"}})
	viewsCard(t, h, "Store code checks errors with errors.Is", "dao_ren", domain.Trigger{})

	file := filepath.Join(h.Location().Worktree, "store", "db.go")
	text := "package store\n\nfunc f() {\n\tdb.Exec(\"vacuum\") // sqlite\n}\n"
	set, err := h.Pack().CompileTriggers(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	hints, err := h.Pack().Hints(ctx, set, pack.HintsRequest{File: file, Text: text, Language: "go"})
	if err != nil {
		t.Fatal(err)
	}
	v := h.EditorViews()
	view, err := v.Hover(ctx, host.HoverRequest{File: file, Language: "go", Line: 4, Word: "sqlite", Matches: hints.Matches, Triggers: set})
	if err != nil {
		t.Fatal(err)
	}
	if len(view.Triggered) != 2 {
		t.Fatalf("triggered %+v, want the pattern card then the tagged one", view.Triggered)
	}
	if p := view.Triggered[0]; p.ID != pat || p.Pattern != `db\.Exec\(` || p.Tag != "" || p.Tier != domain.TierShu || p.Status != domain.StatusPromoted ||
		p.AnchorKind != "worktree" || p.Counts.Of(domain.RoleSupporting) != 1 || p.Counts.Of(domain.RoleVerification) != 1 || p.Label() != "‹shu› Wrap db.Exec calls in a retry on SQLITE_BUSY" {
		t.Errorf("pattern card %+v", p)
	}
	if g := view.Triggered[1]; g.ID != tag || g.Tag != "sqlite" || g.Pattern != "" {
		t.Errorf("tagged card %+v", g)
	}
	// Another line, no word: nothing triggered, the same pack.
	other, err := v.Hover(ctx, host.HoverRequest{File: file, Language: "go", Line: 1, Matches: hints.Matches, Triggers: set})
	if err != nil {
		t.Fatal(err)
	}
	if len(other.Triggered) != 0 || !reflect.DeepEqual(other.Applies, view.Applies) {
		t.Errorf("line 1: triggered %+v, applies %+v", other.Triggered, other.Applies)
	}

	p, err := h.Pack().Context(ctx, pack.ContextRequest{File: file, Language: "go", DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if view.File != p.Request.File || view.File != "store/db.go" {
		t.Errorf("view file %q, pack file %q", view.File, p.Request.File)
	}
	var inline []string
	refs, trimmed := 0, 0
	for _, it := range p.Items {
		switch it.RenderForm {
		case domain.FormInlineFull, domain.FormInlineCompact:
			inline = append(inline, it.ID)
		case domain.FormRefOnly:
			refs++
		default:
			trimmed++
		}
	}
	if len(inline) == 0 {
		t.Fatalf("the pack renders nothing inline (%d items): the test needs a card that applies", len(p.Items))
	}
	var got []string
	last := -1
	for _, g := range view.Applies {
		i := tierIndex(g.Tier)
		if i <= last {
			t.Errorf("tiers out of order: %s after index %d", g.Tier, last)
		}
		last = i
		for _, c := range g.Cards {
			if c.Tier != g.Tier {
				t.Errorf("%s (%s) listed under %s", c.ID, c.Tier, g.Tier)
			}
			got = append(got, c.ID)
		}
	}
	if len(got) != len(inline) || view.Refs != refs || view.Trimmed != trimmed {
		t.Errorf("view applies %v refs %d trimmed %d; pack inline %v refs %d trimmed %d", got, view.Refs, view.Trimmed, inline, refs, trimmed)
	}

	lens, err := v.Lens(ctx, host.LensRequest{File: file, Language: "go"})
	if err != nil {
		t.Fatal(err)
	}
	sum := 0
	for _, n := range lens.ByTier {
		sum += n
	}
	if lens.Inline != len(inline) || lens.Refs != refs || sum != len(inline)+refs {
		t.Errorf("lens %+v, pack inline %d refs %d", lens, len(inline), refs)
	}

	// Cached until Reset: a new link shows in the card's counts only after.
	ev, err := h.Intake().Record(ctx, intake.RecordRequest{Content: "another check of the retry", Field: "storage"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Link(ctx, pat, host.LinkRequest{Role: "verification", EvidenceID: ev.ID}); err != nil {
		t.Fatal(err)
	}
	if c, err := v.Card(ctx, pat); err != nil || c.Counts.Of(domain.RoleVerification) != 1 {
		t.Fatalf("before Reset: %v, counts %+v, want the cached card", err, c.Counts)
	}
	v.Reset()
	if c, err := v.Card(ctx, pat); err != nil || c.Counts.Of(domain.RoleVerification) != 2 {
		t.Fatalf("after Reset: %v, counts %+v, want the new link", err, c.Counts)
	}
}

func tierIndex(t domain.Tier) int {
	for i, x := range domain.Tiers {
		if x == t {
			return i
		}
	}
	return -1
}
