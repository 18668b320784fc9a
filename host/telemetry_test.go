package host_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/audit"
	"github.com/palacehq/palace/host/pack"
	"github.com/palacehq/palace/policies"
	"github.com/palacehq/palace/store"
)

// TestTelemetryWhyTraceMatchesRawRecords runs two months of varied requests
// (budgets that trim, scopes that skip, views) and checks, on the last day,
// that every item's 30-day counts in the pack equal the counts computed
// from the kept raw request records of the window: the rollups the pack
// reads and the per-request records agree, and retention dropped the
// older records as it went.
func TestTelemetryWhyTraceMatchesRawRecords(t *testing.T) {
	ctx := context.Background()
	e := newCxEnv(t)
	h := e.openClock(e.repo("a", "https://github.com/acme/a"))
	var ids []string
	for i := range 8 {
		c := scoped(fmt.Sprintf("storage rule %d keeps writes short and the lock brief", i), []string{"shu", "qi", "dao_ren"}[i%3])
		if i%3 == 2 {
			c = cxCard{statement: fmt.Sprintf("docs rule %d", i), tier: "qi", paths: []string{"docs/**"}}
		}
		ids = append(ids, e.card(h, c))
	}
	reqs := []pack.ContextRequest{
		cxScopedRequest(),
		{File: "store/store.go", Field: "storage", Intents: []string{"debug"}, Budget: 300},
		{Language: "go", Intents: []string{"debug"}, Budget: 1},
		{File: "docs/readme.md"},
	}
	for step := range 240 {
		e.now = cxEpoch.Add(time.Duration(step) * 6 * time.Hour)
		r := reqs[step%len(reqs)]
		r.DryRun = false
		if _, err := h.Pack().Context(ctx, r); err != nil {
			t.Fatal(err)
		}
		if step%7 == 0 {
			if err := h.Pack().RecordViews(ctx, ids[step%len(ids)]); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The raw records are read through another handle, as another
	// process would: the queued ones must be written first.
	if err := h.SettleTelemetry(); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, filepath.Join(e.home, "palace.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	since := store.FormatTime(e.now.Add(-30 * 24 * time.Hour))[:10]
	raw := map[string]*policies.Counts30d{}
	older, kept := 0, 0
	err = st.EachInjectionRequest(ctx, "", func(r store.InjectionRequest) error {
		kept++
		if r.CreatedAt < since {
			older++
			return nil
		}
		for _, ev := range r.Events() {
			c := raw[ev.CardID]
			if c == nil {
				c = &policies.Counts30d{}
				raw[ev.CardID] = c
			}
			switch ev.Outcome {
			case "inline_full", "inline_compact":
				c.Applied++
			case "skipped_cooled":
				c.Skipped++
			case "trimmed":
				c.Trimmed++
			case "viewed":
				c.Viewed++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Retention runs every 64th record, so a few records older than the
	// window may wait for the next round; never more than that many. How
	// many wait depends on how the background writes fell, so "some were
	// dropped" is counted on all the records kept: 240 requests over 60
	// days, and the views, were recorded.
	recorded := 240 + (240+6)/7
	if older > 64 || kept >= recorded {
		t.Errorf("%d raw records older than the window of %d kept (%d recorded); want fewer than 64 older, and some dropped", older, kept, recorded)
	}
	checked := 0
	for _, r := range reqs {
		r.DryRun, r.Explain, r.Budget = true, true, 100_000
		p, err := h.Pack().Context(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range p.Items {
			want := policies.Counts30d{}
			if c := raw[it.ID]; c != nil {
				want = *c
			}
			if it.Counts30d != want {
				t.Errorf("%s: why-trace counts %+v, raw records %+v", it.ID, it.Counts30d, want)
			}
			if want.Applied+want.Trimmed+want.Skipped > 0 {
				checked++
			}
		}
	}
	if checked < 3 {
		t.Errorf("only %d items had counts to compare", checked)
	}
}

// TestMaintenance checks that maintenance drops only raw records older
// than the retention, keeps the rollups and every card, and that the
// doctor reports the telemetry.
func TestMaintenance(t *testing.T) {
	ctx := context.Background()
	e := newCxEnv(t)
	dir := e.repo("a", "https://github.com/acme/a")
	h := e.openClock(dir)
	id := e.card(h, scoped("keep write transactions short", "shu"))
	req := cxScopedRequest()
	req.DryRun = false
	for day := range 40 {
		e.now = cxEpoch.Add(time.Duration(day) * 24 * time.Hour)
		if _, err := h.Pack().Context(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	audit := func() audit.Row {
		t.Helper()
		rep, err := h.Audit(ctx, audit.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rep.Rows {
			if r.ID == id {
				return r
			}
		}
		t.Fatalf("no audit row for %s", id)
		return audit.Row{}
	}
	before := audit()
	r, err := h.Maintenance(ctx, 7, true)
	if err != nil {
		t.Fatal(err)
	}
	if r.Pruned != 32 || r.After.Requests != 8 || !r.Vacuumed || r.After.OldestDay != "2026-04-03" {
		t.Errorf("maintenance = %+v; want 32 of 40 daily records dropped, the 8 from 2026-04-03 kept, a vacuum", r)
	}
	if after := audit(); after.Counts30d != before.Counts30d || after.AppliedEver != before.AppliedEver || after.AppliedEver != 40 {
		t.Errorf("audit after maintenance %+v / %d, before %+v / %d; want equal, 40 applied ever", after.Counts30d, after.AppliedEver, before.Counts30d, before.AppliedEver)
	}
	if _, err := h.Maintenance(ctx, -1, false); host.KindOf(err) != host.KindInvalid {
		t.Errorf("negative keep-days: %v, want KindInvalid", err)
	}
	agent := e.open(dir, host.Agent)
	if _, err := agent.Maintenance(ctx, 0, false); host.KindOf(err) != host.KindMode {
		t.Errorf("agent maintenance: %v, want refused", err)
	}
	rep := host.Doctor(ctx, host.Options{Home: e.home, Cwd: dir})
	var line string
	for _, c := range rep.Checks {
		if c.Name == "telemetry" {
			line = c.Detail
		}
	}
	if !strings.Contains(line, "8 request records kept 30 days (oldest 2026-04-03)") || !strings.Contains(line, "database ") {
		t.Errorf("doctor telemetry line %q", line)
	}
	t.Setenv(host.TelemetryDaysEnv, "soon")
	if _, err := host.Open(ctx, host.Options{Home: e.home, Cwd: dir}); host.KindOf(err) != host.KindInvalid || !strings.Contains(err.Error(), host.TelemetryDaysEnv) {
		t.Errorf("bad %s: %v, want KindInvalid naming it", host.TelemetryDaysEnv, err)
	}
}
