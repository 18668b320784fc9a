package pack_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/internal/jobtest"
	"github.com/palacehq/palace/host/pack"
)

// formLevel orders render forms from most to least text.
var formLevel = map[domain.RenderForm]int{"inline_full": 0, "inline_compact": 1, "ref_only": 2, "inspector_only": 3}

// TestContextBudgetKeepsTheRelevantCard: under a budget that holds one
// line, the card the request is about stays inline and the scoped bait
// around it goes first; nothing is cut and nothing exceeds the budget.
func TestContextBudgetKeepsTheRelevantCard(t *testing.T) {
	ctx := context.Background()
	fx := newFixture(t, jobtest.Options{Git: true})
	for i := range 4 {
		c := scoped(fmt.Sprintf("store rule %d: keep write transactions short in the store", i), domain.TierShu)
		c.content = fmt.Sprintf("Detail %d: a long write transaction blocks every other writer.", i)
		fx.card(t, c)
	}
	want := scoped("Checkpoint the WAL after bulk imports", domain.TierShu)
	want.content = "Imports grow the WAL without bound until a checkpoint runs."
	id := fx.card(t, want)
	req := scopedRequest()
	req.Query = "the WAL keeps growing after a bulk import"
	full, err := fx.pl.Context(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if it, ok := item(full, id); !ok || it.Lane == "ref_only" || full.Items[0].ID != id {
		t.Fatalf("the relevant card is not first and inline: %+v", full.Items)
	}
	checkPack(t, full, "")
	for _, budget := range []int{full.Budget.Used - 1, 420, 330} {
		req.Budget = budget
		p, err := fx.pl.Context(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		checkPack(t, p, "")
		if p.Budget.Over || p.Budget.Used > budget {
			t.Fatalf("budget %d: used %d", budget, p.Budget.Used)
		}
		if it, _ := item(p, id); it.RenderForm != "inline_compact" && it.RenderForm != "inline_full" {
			t.Errorf("budget %d: the relevant card is %s, want inline (pack:\n%s)", budget, it.RenderForm, p.Rendered)
		}
	}
}

// TestContextReferencesNameHowToFetch: a reference line is the card's id,
// tier, field and anchor, and the preamble says once how its reader
// fetches a card — the CLI command by default, the palace_cards tool for an
// agent over MCP; the budget counts either exactly.
func TestContextReferencesNameHowToFetch(t *testing.T) {
	ctx := context.Background()
	fx := newFixture(t, jobtest.Options{Git: true})
	// More scoped cards than the scoped lane holds, none a near-duplicate
	// of another: the rest are references.
	var ids []string
	for i := range 12 {
		ids = append(ids, fx.card(t, scoped(fmt.Sprintf("store rule: keep tx%d short, batch%d writes, log%d retries", i, i, i), domain.TierShu)))
	}
	req := scopedRequest()
	p, err := fx.pl.Context(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	var ref string
	for _, it := range p.Items {
		if it.RenderForm == "ref_only" {
			ref = it.ID
		}
	}
	if ref == "" {
		t.Fatalf("no reference among %d cards:\n%s", len(ids), p.Rendered)
	}
	for fetch, want := range map[pack.CardFetch]string{
		pack.FetchByCLI:     "fetch a card with `palace card show ID`.",
		pack.FetchByMCPTool: "fetch a card with palace_cards get `ID`.",
	} {
		req.Fetch = fetch
		p, err := fx.pl.Context(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		checkPack(t, p, "")
		line := "- `" + ref + "` shu · field storage · worktree\n"
		if it, _ := item(p, ref); it.RenderForm != "ref_only" || !strings.Contains(p.Rendered, line) || !strings.Contains(p.Rendered, want) {
			t.Errorf("fetch %d: %s renders %s; want the line %q and the preamble saying %q:\n%s", fetch, ref, it.RenderForm, line, want, p.Rendered)
		}
		if fetch == pack.FetchByMCPTool && strings.Contains(p.Rendered, "palace card show") {
			t.Errorf("the MCP rendering names the CLI:\n%s", p.Rendered)
		}
	}
}

// checkPack asserts what must hold for every pack: sizes add up, items are
// whole or absent, the trim list is exact, and lower salience never keeps
// more text than higher salience in the scoped lane.
func checkPack(t *testing.T, p pack.Pack, protected string) {
	t.Helper()
	r := p.Rendered
	if n := utf8.RuneCountInString(r); n != p.Budget.Used {
		t.Errorf("budget.used = %d, rendered has %d characters", p.Budget.Used, n)
	}
	if p.Budget.Used > p.Budget.Limit && (!p.Budget.Over || p.Budget.OverflowReason == "") {
		t.Errorf("over budget without saying so: %+v", p.Budget)
	}
	sum := 0
	for _, s := range p.Sections {
		sum += s.Chars
	}
	if preamble := strings.Index(r, "\n## "); preamble >= 0 && sum+utf8.RuneCountInString(r[:preamble]) > p.Budget.Used {
		t.Errorf("sections add up to more than the rendering")
	}
	var trimmed []string
	for _, it := range p.Items {
		stmt := it.Statement
		content := "  " + strings.TrimSpace(strings.Split(it.Content+"\n", "\n")[0])
		switch it.RenderForm {
		case "inline_full":
			if !strings.Contains(r, stmt) || !strings.Contains(r, content) {
				t.Errorf("%s inline_full but statement or content missing", it.ID)
			}
		case "inline_compact":
			if !strings.Contains(r, stmt) || strings.Contains(r, content) {
				t.Errorf("%s inline_compact: statement must be whole, content absent", it.ID)
			}
		case "ref_only":
			if strings.Contains(r, stmt) || !strings.Contains(r, "- `"+it.ID+"` "+string(it.Tier)) {
				t.Errorf("%s ref_only: one line with the id, no statement text", it.ID)
			}
		case "inspector_only":
			if strings.Contains(r, it.ID) {
				t.Errorf("%s dropped but its id renders", it.ID)
			}
		}
		if it.Trimmed != nil {
			trimmed = append(trimmed, it.ID)
			if it.Trimmed.To != it.RenderForm || formLevel[it.Trimmed.From] >= formLevel[it.Trimmed.To] || it.Trimmed.Reason == "" {
				t.Errorf("%s trimmed record %+v does not match form %s", it.ID, it.Trimmed, it.RenderForm)
			}
		} else if it.RenderForm != it.LaneForm {
			t.Errorf("%s changed form %s → %s without a trim record", it.ID, it.LaneForm, it.RenderForm)
		}
		if it.ID == protected && formLevel[it.RenderForm] > formLevel["inline_compact"] {
			t.Errorf("foundational %s reduced to %s", it.ID, it.RenderForm)
		}
	}
	if !slices.Equal(trimmed, p.Selection.TrimmedDueToBudgetIDs) {
		t.Errorf("trimmed_due_to_budget_ids = %v, items say %v", p.Selection.TrimmedDueToBudgetIDs, trimmed)
	}
	for _, x := range p.Items {
		for _, y := range p.Items {
			if x.Lane == "scoped" && y.Lane == "scoped" && x.Salience < y.Salience && formLevel[x.RenderForm] < formLevel[y.RenderForm] {
				t.Errorf("%s (salience %d, %s) keeps more than %s (salience %d, %s)", x.ID, x.Salience, x.RenderForm, y.ID, y.Salience, y.RenderForm)
			}
		}
	}
}

// TestContextCoolingRecovers: a card trimmed by the budget request after
// request builds up trim counts, yet the next request about it inlines it
// (cooling never pushes out a card relevant to the current request), and
// its status never changes.
func TestContextCoolingRecovers(t *testing.T) {
	ctx := context.Background()
	fx := newFixture(t, jobtest.Options{Git: true})
	id := fx.card(t, scoped("keep write transactions short", domain.TierShu))
	req := scopedRequest()
	req.Query = "a long write transaction blocks the other writers"
	req.DryRun, req.Budget = false, 1
	for day := range 10 {
		if day > 0 {
			fx.Advance(24 * time.Hour)
		}
		p, err := fx.pl.Context(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if it, ok := item(p, id); ok && it.Trimmed == nil {
			t.Fatalf("day %d: a budget of 1 character did not trim the card: %+v", day, it)
		}
	}
	if err := fx.Store.FlushRecords(); err != nil {
		t.Fatal(err)
	}
	req.Budget, req.Explain = 0, true
	p, err := fx.pl.Context(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	it, ok := item(p, id)
	if !ok || it.Counts30d.Trimmed < 10 || (it.RenderForm != "inline_compact" && it.RenderForm != "inline_full") {
		t.Fatalf("after 10 trims the relevant card is %+v, want inline", it)
	}
	c, err := fx.Store.Card(ctx, id)
	if err != nil || c.Status != "promoted" {
		t.Fatalf("status %q %v, want promoted", c.Status, err)
	}
}

// A query in Chinese finds the card whose statement holds its word inside
// a run of text written without spaces.
func TestContextFindsCJKWordsInsideRuns(t *testing.T) {
	fx := newFixture(t, jobtest.Options{Git: true})
	wal := fx.card(t, spec{statement: "使用WAL模式避免数据库锁", tier: domain.TierShu, anchor: domain.AnchorRepo})
	fx.card(t, spec{statement: "提交前运行全部测试", tier: domain.TierShu, anchor: domain.AnchorRepo})
	p, err := fx.pl.Context(context.Background(), pack.ContextRequest{Query: "数据库锁", DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	it, ok := item(p, wal)
	if !ok || it.RenderForm != domain.FormInlineCompact || it.Relevance < 0.5 {
		t.Fatalf("the WAL card for 数据库锁: %+v (found %v), items %v", it, ok, itemIDs(p))
	}
	if len(p.Items) != 1 {
		t.Errorf("items %v, want the WAL card alone", itemIDs(p))
	}
}
