package host_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/palacehq/palace/host"
)

// formLevel orders render forms from most to least text.
var formLevel = map[string]int{"inline_full": 0, "inline_compact": 1, "ref_only": 2, "inspector_only": 3}

func TestContextBudgetTrimsWholeItemsLowestSalienceFirst(t *testing.T) {
	ctx := context.Background()
	e := newCxEnv(t)
	h := e.open(e.repo("a", "https://github.com/acme/a"), host.Human)
	var ids []string
	for i := range 5 {
		c := scoped(fmt.Sprintf("scoped rule %d: keep write transactions short", i), "shu")
		c.content = fmt.Sprintf("Detail %d: a long write transaction blocks every other writer behind the busy timeout.", i)
		c.renderPref = "inline_full"
		id := e.card(h, c)
		ids = append(ids, id)
		// Views warm a card a little: rule i gets salience 50+i.
		for range i {
			if err := h.RecordViews(ctx, id); err != nil {
				t.Fatal(err)
			}
		}
	}
	found := e.card(h, cxCard{statement: "foundational: never lose a user's evidence", tier: "dao_ren", field: "storage",
		scopeFields: []string{"storage"}, intents: []string{"debug", "storage"}, persistence: "foundational",
		content: "Evidence is append-only; no code path edits or deletes it."})

	full, err := h.Context(ctx, cxScopedRequest())
	if err != nil {
		t.Fatal(err)
	}
	if full.Budget.Over || len(full.Selection.TrimmedDueToBudgetIDs) != 0 || len(full.Items) != 6 {
		t.Fatalf("the default budget trims already: %+v, %d items", full.Budget, len(full.Items))
	}
	if it, _ := item(full, found); it.Lane != "core" {
		t.Fatalf("the foundational card is in lane %s, want core", it.Lane)
	}
	for i, id := range ids {
		if it, _ := item(full, id); it.Lane != "scoped" || it.Salience != 50+i || it.RenderForm != "inline_full" {
			t.Fatalf("rule %d: lane %s salience %d form %s, want scoped %d inline_full", i, it.Lane, it.Salience, it.RenderForm, 50+i)
		}
	}
	// One character short: exactly the lowest-salience scoped item gives
	// up its content, nothing else changes.
	req := cxScopedRequest()
	req.Budget = full.Budget.Used - 1
	p, err := h.Context(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Selection.TrimmedDueToBudgetIDs; !slices.Equal(got, []string{ids[0]}) {
		t.Fatalf("trimmed = %v, want only the lowest-salience scoped item %s", got, ids[0])
	}
	if it, _ := item(p, ids[0]); it.RenderForm != "inline_compact" || it.Trimmed == nil || it.Trimmed.From != "inline_full" ||
		!strings.Contains(it.Trimmed.Reason, fmt.Sprintf("budget of %d characters", req.Budget)) {
		t.Errorf("trimmed item = %+v %+v", it.RenderForm, it.Trimmed)
	}

	prev := -1
	for budget := full.Budget.Used; budget >= 0; budget -= 37 {
		req.Budget = budget
		p, err := h.Context(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(fmt.Sprintf("budget %d", budget), func(t *testing.T) {
			checkPack(t, p, found)
		})
		if n := len(p.Selection.TrimmedDueToBudgetIDs); n < prev {
			t.Errorf("budget %d trims %d items, a larger budget trimmed %d", budget, n, prev)
		} else {
			prev = n
		}
	}
}

// checkPack asserts what must hold for every pack: sizes add up, items are
// whole or absent, the trim list is exact, and lower salience never keeps
// more text than higher salience in the scoped lane.
func checkPack(t *testing.T, p host.Pack, protected string) {
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
			if strings.Contains(r, stmt) || !strings.Contains(r, "palace card show "+it.ID) {
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
