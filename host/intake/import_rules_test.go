package intake_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/authority"
	"github.com/palacehq/palace/host/intake"
	"github.com/palacehq/palace/host/internal/jobtest"
	"github.com/palacehq/palace/internal/hosterr"
	"github.com/palacehq/palace/store"
)

const agentsMD = `# Rules

- Keep handlers small and named.
- Quote paths in shell scripts.

<!-- palace:begin agents-md -->
- Open SQLite in WAL mode (` + "`kc_01generatedgenerated`" + ` · shu · promoted · paths ` + "`store/**`" + `)
<!-- palace:end -->
`

// TestImportRulesMakesCandidatesOnce: each hand-written rule of a file
// becomes evidence citing its line and a candidate at the repository
// anchor, written by the door; palace's own block is skipped; importing
// again (the rule moved a line) links nothing twice and makes no twin, and
// a retired card is not revived.
func TestImportRulesMakesCandidatesOnce(t *testing.T) {
	ctx := context.Background()
	f := jobtest.New(t, jobtest.Options{Git: true})
	in := newIntake(f)
	writeFile(t, filepath.Join(f.Dir, "AGENTS.md"), agentsMD)
	res, err := in.ImportRules(ctx, intake.ImportRequest{Files: []string{"AGENTS.md"}, Field: "style"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 1 || res.Files[0].Path != "AGENTS.md" || len(res.Files[0].Rules) != 2 || len(res.Files[0].GeneratedSkipped) != 1 {
		t.Fatalf("import %+v: want two rules of AGENTS.md and the palace block skipped", res.Files)
	}
	if res.EvidenceNew != 2 || res.CardsNew != 2 || res.EvidenceExisting+res.CardsExisting != 0 {
		t.Errorf("counts %+v, want two new pieces of evidence and two new cards", res)
	}
	r := res.Files[0].Rules[0]
	if r.SourceRef != "AGENTS.md#L3" || r.Statement != "Keep handlers small and named." || r.CardStatus != "candidate" || !r.CardNew || !r.EvidenceNew {
		t.Errorf("first rule %+v", r)
	}
	c, err := f.Store.Card(ctx, r.CardID)
	if err != nil || c.Status != domain.StatusCandidate || c.Tier != domain.TierShu || c.Field != "style" || f.Loc.KindOf(c.AnchorID) != domain.AnchorRepo {
		t.Fatalf("card %+v, %v; want a shu candidate of field style at the repo anchor", c, err)
	}
	links, err := f.Store.Links(ctx, r.CardID)
	if err != nil || len(links) != 1 || links[0].EvidenceID != r.EvidenceID || links[0].Role != domain.RoleSupporting {
		t.Errorf("links %+v, %v; want the rule's evidence, supporting", links, err)
	}
	ev, err := f.Store.Evidence(ctx, r.EvidenceID)
	if err != nil || ev.SourceRef != "AGENTS.md#L3" || !strings.Contains(strings.Join(ev.Tags, ","), "rulefile:") {
		t.Errorf("evidence %+v, %v; want source AGENTS.md#L3 tagged with its kind of file", ev, err)
	}
	evs, err := f.Store.Events(ctx, r.CardID)
	if err != nil || len(evs) != 1 || evs[0].Type != domain.EventCreated || !strings.Contains(string(evs[0].Data), "AGENTS.md#L3") {
		t.Errorf("events %+v, %v; want one created event naming the source", evs, err)
	}

	// The first rule is retired; the file gains a line above its rules.
	f.Apply(t, authority.Change{Op: authority.OpRetire, CardID: r.CardID, Reason: "obsolete"})
	writeFile(t, filepath.Join(f.Dir, "AGENTS.md"), "<!-- moved -->\n"+agentsMD)
	again, err := in.ImportRules(ctx, intake.ImportRequest{Files: []string{filepath.Join(f.Dir, "AGENTS.md")}, Field: "style"})
	if err != nil {
		t.Fatal(err)
	}
	if again.EvidenceNew+again.CardsNew != 0 || again.EvidenceExisting != 2 || again.CardsExisting != 2 {
		t.Fatalf("re-import %+v: want everything existing", again)
	}
	if got := again.Files[0].Rules[0]; got.CardID != r.CardID || got.EvidenceID != r.EvidenceID || got.CardStatus != "retired" {
		t.Errorf("re-imported rule %+v, want the retired card and its evidence", got)
	}
	if n := evidenceCount(t, f); n != 2 {
		t.Errorf("%d evidence rows after the re-import, want 2", n)
	}
	if cards, _ := f.Store.ListCards(ctx, store.CardFilter{}); len(cards) != 2 {
		t.Errorf("%d cards after the re-import, want 2", len(cards))
	}

	// The same rule in another file is another source of the same card.
	writeFile(t, filepath.Join(f.Dir, "CLAUDE.md"), "- Quote paths in shell scripts.\n")
	other, err := in.ImportRules(ctx, intake.ImportRequest{Files: []string{"CLAUDE.md"}, Field: "style"})
	if err != nil {
		t.Fatal(err)
	}
	if o := other.Files[0].Rules[0]; !o.EvidenceNew || o.CardNew || o.CardID != res.Files[0].Rules[1].CardID {
		t.Errorf("the rule from CLAUDE.md %+v, want new evidence linked to the existing card", o)
	}
	if links, _ := f.Store.Links(ctx, res.Files[0].Rules[1].CardID); len(links) != 2 {
		t.Errorf("the shared rule's card has %d links, want 2", len(links))
	}

	// With the generated rules.
	gen, err := in.ImportRules(ctx, intake.ImportRequest{Files: []string{"AGENTS.md"}, IncludeGenerated: true, Tier: "qi"})
	if err != nil || len(gen.Files[0].Rules) != 3 || gen.CardsNew != 1 || len(gen.Files[0].GeneratedSkipped) != 0 {
		t.Fatalf("with generated rules: %+v, %v; want the block's rule as a new card", gen, err)
	}
	if g := gen.Files[0].Rules[2]; g.Statement != "Open SQLite in WAL mode" || !strings.Contains(strings.Join(g.Scope.Paths, ","), "store/**") {
		t.Errorf("generated rule %+v, want its statement and paths", g)
	}
}

// TestImportRulesWritesNothingOnBadInput: a file holding a secret, a
// missing file, a link out of the checkout, no files, a bad tier or anchor
// refuse the whole import before anything is written.
func TestImportRulesWritesNothingOnBadInput(t *testing.T) {
	ctx := context.Background()
	f := jobtest.New(t, jobtest.Options{Git: true})
	in := newIntake(f)
	writeFile(t, filepath.Join(f.Dir, "AGENTS.md"), "- Keep handlers small.\n")
	writeFile(t, filepath.Join(f.Dir, "SECRET.md"), "- Deploy with "+token+".\n")
	outside := filepath.Join(t.TempDir(), "id_ed25519")
	writeFile(t, outside, "- not a rule of this repository\n")
	if err := os.Symlink(outside, filepath.Join(f.Dir, "LINKED.md")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		req  intake.ImportRequest
		kind hosterr.Kind
		want string
	}{
		{"secret", intake.ImportRequest{Files: []string{"AGENTS.md", "SECRET.md"}}, hosterr.KindDenied, "SECRET.md:1: content holds a secret"},
		{"missing", intake.ImportRequest{Files: []string{"AGENTS.md", "NOPE.md"}}, hosterr.KindInvalid, "NOPE.md"},
		{"link out", intake.ImportRequest{Files: []string{"AGENTS.md", "LINKED.md"}}, hosterr.KindInvalid, outside},
		{"no files", intake.ImportRequest{}, hosterr.KindInvalid, "no files to import"},
		{"tier", intake.ImportRequest{Files: []string{"AGENTS.md"}, Tier: "sage"}, hosterr.KindInvalid, "tier"},
		{"anchor", intake.ImportRequest{Files: []string{"AGENTS.md"}, Anchor: "planet"}, hosterr.KindInvalid, "anchor"},
		{"global shu", intake.ImportRequest{Files: []string{"AGENTS.md"}, Anchor: "global"}, hosterr.KindInvalid, "AGENTS.md:1: --anchor global for a shu card"},
	} {
		_, err := in.ImportRules(ctx, c.req)
		wantKind(t, c.name, err, c.kind, c.want)
	}
	if n := evidenceCount(t, f); n != 0 {
		t.Errorf("refused imports stored %d evidence rows", n)
	}
	if cards, _ := f.Store.ListCards(ctx, store.CardFilter{}); len(cards) != 0 {
		t.Errorf("refused imports stored %d cards", len(cards))
	}

	// Outside git a file is the caller's, and the anchor is global.
	home := jobtest.New(t, jobtest.Options{})
	hi := newIntake(home)
	writeFile(t, filepath.Join(home.Dir, "habits.md"), "- Sleep eight hours.\n")
	res, err := hi.ImportRules(ctx, intake.ImportRequest{Files: []string{"habits.md"}, Tier: "dao_tian"})
	if err != nil || res.CardsNew != 1 || res.Files[0].Path != filepath.ToSlash(filepath.Join(home.Dir, "habits.md")) {
		t.Fatalf("import outside git: %+v, %v", res, err)
	}
	if c, _ := home.Store.Card(ctx, res.Files[0].Rules[0].CardID); c.Domain != domain.DomainGlobal {
		t.Errorf("a global rule's card has domain %s, want global", c.Domain)
	}
}
