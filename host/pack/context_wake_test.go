package pack_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/internal/jobtest"
	"github.com/palacehq/palace/host/pack"
	"github.com/palacehq/palace/store"
)

// wakePalace is a repository with two canonical dao_tian laws, its
// foundational and protected cards, a canonical dao_ren card, a dozen
// promoted shu cards, qi cards and a path-scoped card: the memory a
// session starts in.
type wakePalace struct {
	fx                                    *fixture
	laws                                  []string
	foundational, protected, canonicalLaw string
	shu, qi                               []string
	pathScoped                            string
}

func newWakePalace(t *testing.T) *wakePalace {
	fx := newFixture(t, jobtest.Options{Git: true})
	w := &wakePalace{fx: fx}
	for _, s := range []string{"Never commit a secret to any repository", "State what you did not verify"} {
		w.laws = append(w.laws, fx.card(t, spec{statement: s, tier: domain.TierDaoTian, anchor: domain.AnchorGlobal, status: domain.StatusCanonical}))
	}
	w.foundational = fx.card(t, spec{statement: "All storage goes through the store package", tier: domain.TierDaoRen, anchor: domain.AnchorRepo, persistence: domain.PersistenceFoundational})
	w.protected = fx.card(t, spec{statement: "Migrations are appended, never edited", tier: domain.TierShu, anchor: domain.AnchorRepo, persistence: domain.PersistenceProtected})
	w.canonicalLaw = fx.card(t, spec{statement: "Every public function returns wrapped errors", tier: domain.TierDaoRen, anchor: domain.AnchorRepo, status: domain.StatusCanonical})
	for _, s := range []string{
		"Log with the request id attached", "Export metrics through the registry", "Retry idempotent calls with backoff",
		"Every outbound call carries a deadline", "Cache reads behind an interface", "Page list endpoints by cursor",
		"Name packages by what they provide", "Table tests carry a name per case", "Fixtures live under testdata",
		"Configuration is read once at start", "Flags mirror configuration keys", "Document every exported identifier",
	} {
		w.shu = append(w.shu, fx.card(t, spec{statement: s, tier: domain.TierShu, anchor: domain.AnchorRepo}))
	}
	for _, tool := range []string{"sqlite", "opa", "wazero"} {
		w.qi = append(w.qi, fx.card(t, spec{statement: "Pin the " + tool + " version in go.mod", tier: domain.TierQi, anchor: domain.AnchorRepo}))
	}
	w.pathScoped = fx.card(t, spec{statement: "Keep handlers thin in api", tier: domain.TierShu, anchor: domain.AnchorRepo, scope: domain.Scope{Paths: []string{"api/**"}}})
	return w
}

func (w *wakePalace) wake(t *testing.T, req pack.ContextRequest) pack.Pack {
	t.Helper()
	req.DryRun = true
	p, err := w.fx.pl.Context(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func inlineIDs(p pack.Pack) []string {
	var out []string
	for _, it := range p.Items {
		if it.RenderForm == domain.FormInlineFull || it.RenderForm == domain.FormInlineCompact {
			out = append(out, it.ID)
		}
	}
	return out
}

// With no task the pack wakes the foundational layer: one dao_tian law,
// the foundational and protected cards and the most valued card in the
// first section, then the promoted shu cards up to the lane's size; no qi
// card, no card only a path would wake, no reference lines.
func TestWakeUpPackHoldsTheFoundationalLayer(t *testing.T) {
	w := newWakePalace(t)
	p := w.wake(t, pack.ContextRequest{})
	if !p.Request.Wake || !strings.Contains(p.Rendered, "No task was named, so this is the wake-up layer") {
		t.Fatalf("a request with no task is not a wake-up:\n%s", p.Rendered)
	}
	got := inlineIDs(p)
	laws := 0
	for _, id := range got {
		if slices.Contains(w.laws, id) {
			laws++
		}
	}
	if laws != 1 {
		t.Errorf("%d dao_tian laws inline, want 1 (the default --dao-tian-limit)", laws)
	}
	for _, id := range []string{w.foundational, w.protected, w.canonicalLaw} {
		if !slices.Contains(got, id) {
			t.Errorf("%s is not inline in the wake-up pack:\n%s", id, p.Rendered)
		}
	}
	var foundations, valued []string
	for _, s := range p.Sections {
		switch s.Name {
		case "core":
			foundations = s.IDs
			if s.Title != "Foundations" {
				t.Errorf("core section titled %q", s.Title)
			}
		case "scoped":
			valued = s.IDs
			if s.Title != "Most valued" {
				t.Errorf("scoped section titled %q", s.Title)
			}
		case "references":
			t.Errorf("a wake-up pack lists references: %v", s.IDs)
		}
	}
	if len(foundations) != 3 || len(valued) != 8 || valued[0] != w.canonicalLaw {
		t.Errorf("foundations %v, most valued %v: want the law and the two standing cards, then the canonical dao_ren card and 7 shu cards (the scoped lane's size)", foundations, valued)
	}
	for _, id := range append(slices.Clone(w.qi), w.pathScoped) {
		if slices.Contains(got, id) {
			t.Errorf("%s (qi, or woken only by a path) is inline in a wake-up pack", id)
		}
	}
	overflow := 0
	for _, s := range p.Skipped {
		if s.Reason == "lane_limit" {
			overflow++
		}
	}
	if overflow != len(w.shu)+1-8 {
		t.Errorf("%d cards left out for the lane's size, want %d", overflow, len(w.shu)+1-8)
	}
	if p.MemoryExists.Reason != "" || p.Budget.Over {
		t.Errorf("reason %q, over budget %v", p.MemoryExists.Reason, p.Budget.Over)
	}

	// --dao-tian-limit 0 leaves the laws out; a task is no wake-up.
	p = w.wake(t, pack.ContextRequest{DaoTianLimit: new(int)})
	for _, id := range w.laws {
		if slices.Contains(inlineIDs(p), id) {
			t.Errorf("--dao-tian-limit 0 inlined the law %s", id)
		}
	}
	if p = w.wake(t, pack.ContextRequest{Query: "handle retries"}); p.Request.Wake || strings.Contains(p.Rendered, "wake-up layer") {
		t.Errorf("a request with a query is a wake-up:\n%s", p.Rendered)
	}
}

// A budget too small for the whole layer keeps the most valuable items
// whole, trims or references the rest, and never exceeds the limit; the
// trims a session start makes cool nothing for the tasks that follow.
func TestWakeUpPackKeepsItsBudget(t *testing.T) {
	w := newWakePalace(t)
	full := w.wake(t, pack.ContextRequest{})
	for _, budget := range []int{1200, 800, 500} {
		p := w.wake(t, pack.ContextRequest{Budget: budget})
		if p.Budget.Used > budget || p.Budget.Over {
			t.Fatalf("budget %d: used %d", budget, p.Budget.Used)
		}
		if len(p.Selection.TrimmedDueToBudgetIDs) == 0 || p.MemoryExists.Rendered == 0 {
			t.Errorf("budget %d (of %d used unbounded): trimmed %v, rendered %d", budget, full.Budget.Used, p.Selection.TrimmedDueToBudgetIDs, p.MemoryExists.Rendered)
		}
		if in := inlineIDs(p); len(in) == 0 || !slices.Contains(in, w.foundational) && !slices.Contains(w.laws, in[0]) {
			t.Errorf("budget %d: the first of the layer did not stay inline: %v", budget, in)
		}
		checkPack(t, p, "")
	}
	// A budget the preamble and its wake-up note would fill drops the
	// note before any card.
	small := w.wake(t, pack.ContextRequest{Budget: 300})
	if small.Budget.Over || small.Budget.Used > 300 || strings.Contains(small.Rendered, "wake-up layer") || small.MemoryExists.Rendered == 0 {
		t.Errorf("budget 300: used %d, over %v:\n%s", small.Budget.Used, small.Budget.Over, small.Rendered)
	}
	// Recorded as a real request: the cards its budget trimmed keep no
	// trim that would cool them.
	p, err := w.fx.pl.Context(context.Background(), pack.ContextRequest{Budget: 500})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Selection.TrimmedDueToBudgetIDs) == 0 {
		t.Fatal("the recorded session start trimmed nothing")
	}
	ids := append(append(append(slices.Clone(w.laws), w.foundational, w.protected, w.canonicalLaw, w.pathScoped), w.shu...), w.qi...)
	stats, err := w.fx.Store.InjectionStats(context.Background(), ids, "2000-01-01T00:00:00.000Z")
	if err != nil {
		t.Fatal(err)
	}
	applied := 0
	for _, id := range ids {
		c := stats[id].Counts
		if c[store.OutcomeTrimmed] != 0 || c[store.OutcomeSkippedCooled] != 0 {
			t.Errorf("%s counts %d trims and %d skips from a session start", id, c[store.OutcomeTrimmed], c[store.OutcomeSkippedCooled])
		}
		applied += c[store.OutcomeInlineFull] + c[store.OutcomeInlineCompact]
	}
	if applied == 0 {
		t.Error("the session start recorded no application of what it showed")
	}
}

// Every empty pack names its reason, a wake-up's too; never a blank.
func TestEmptyPacksNameTheirReason(t *testing.T) {
	fx := newFixture(t, jobtest.Options{Git: true})
	for _, tool := range []string{"sqlite", "opa"} {
		fx.card(t, spec{statement: "Pin the " + tool + " version in go.mod", tier: domain.TierQi, anchor: domain.AnchorRepo})
	}
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		req  pack.ContextRequest
		want string
	}{
		{"no task, no card of the wake-up layer", pack.ContextRequest{}, "No task was named, so the pack holds the wake-up layer"},
		{"a task about something else", pack.ContextRequest{Query: "quantum chromodynamics lattice"}, "the request is about none of them (2 not_relevant)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.DryRun = true
			p, err := fx.pl.Context(ctx, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if p.MemoryExists.Rendered != 0 {
				t.Fatalf("rendered %d cards:\n%s", p.MemoryExists.Rendered, p.Rendered)
			}
			r := p.MemoryExists.Reason
			if !strings.Contains(r, tt.want) || strings.Contains(r, "()") || !strings.Contains(p.Rendered, r) {
				t.Errorf("reason %q, want it to say %q and the rendering to carry it:\n%s", r, tt.want, p.Rendered)
			}
			b, err := fx.pl.Brief(ctx, pack.BriefRequest{Query: tt.req.Query})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.Summary, r) && !slices.ContainsFunc(b.Uncertainty, func(s pack.BriefSignal) bool { return strings.Contains(s.Message, r) }) {
				t.Errorf("the brief does not carry the reason %q: %+v", r, b)
			}
		})
	}
}
