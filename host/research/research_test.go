package research_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/palacehq/palace/anchor"
	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/intake"
	"github.com/palacehq/palace/host/internal/jobtest"
	"github.com/palacehq/palace/host/research"
	"github.com/palacehq/palace/internal/hosterr"
)

// ingester is the research job over f, built as host builds it: findings
// are checked by the evidence intake, anchors resolved as intake does.
func ingester(f *jobtest.Fixture, batch int) *research.Ingester {
	in := intake.New(intake.Config{Env: f.Env, Gate: f.Keeper(), Echo: &intake.EchoGuard{}, EnsureAnchor: f.EnsureAnchor, Door: f.Door()})
	return research.New(research.Config{
		Env: f.Env,
		PrepareEvidence: func(fd research.Finding, k domain.AnchorKind) (domain.Evidence, error) {
			ev, _, err := in.PrepareEvidence(intake.RecordRequest{Content: fd.Content, Field: fd.Field, Domain: fd.Domain, Provenance: "research",
				SourceRef: fd.SourceRef, Tags: fd.Tags, Anchor: string(k)}, "")
			return ev, err
		},
		ResolveAnchorKind: func(field, s string) (domain.AnchorKind, error) { return intake.ResolveAnchorKind(f.Loc, field, s) },
		EnsureAnchor:      f.EnsureAnchor,
		BatchSize:         batch,
	})
}

func wantKind(t *testing.T, what string, err error, kind hosterr.Kind, sub string) {
	t.Helper()
	var he *hosterr.Error
	if !errors.As(err, &he) || he.Kind != kind || !strings.Contains(err.Error(), sub) {
		t.Errorf("%s: %v; want kind %v naming %q", what, err, kind, sub)
	}
}

type finding struct {
	ID      string `json:"id"`
	Content string `json:"content"`
	Source  string `json:"source"`
	Field   string `json:"field,omitempty"`
}

type insight struct {
	Statement string   `json:"statement"`
	Tier      string   `json:"tier"`
	Field     string   `json:"field"`
	Findings  []string `json:"findings"`
}

func report(t *testing.T, id, about string, fs []finding, ins []insight) []byte {
	t.Helper()
	doc := map[string]any{"report_id": id, "title": "SQLite under load",
		"sources":  []map[string]string{{"id": "s1", "url": "https://sqlite.org/wal.html", "title": "WAL"}},
		"findings": fs}
	if about != "" {
		doc["about"] = about
	}
	if ins != nil {
		doc["candidate_insights"] = ins
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var findings = []finding{
	{ID: "f1", Content: "WAL mode lets readers run during a write", Source: "s1", Field: "storage"},
	{ID: "f2", Content: "busy_timeout retries a locked database", Source: "s1", Field: "storage"},
	// f3 repeats f1's content: written marked a duplicate of it.
	{ID: "f3", Content: "WAL mode lets readers run during a write", Source: "https://example.com/wal"},
}

// repeats reports whether exactly one of findings f1 and f3 (the same
// content) is marked a duplicate of the other; which one is the original
// follows the order rows are written in (by id).
func repeats(ev []research.PlannedEvidence) bool {
	a, b := ev[0], ev[2]
	return (a.DuplicateOf == b.ID) != (b.DuplicateOf == a.ID) && (a.DuplicateOf == "" || b.DuplicateOf == "")
}

// An ingest writes one row per finding with an id of the anchor, the
// report and the finding; a repeated content counts once, as its
// original; a second ingest writes nothing.
func TestIngestWritesEachFindingOnce(t *testing.T) {
	ctx := context.Background()
	f := jobtest.New(t, jobtest.Options{Git: true})
	ig := ingester(f, 2)
	rep := report(t, "rep-1", "", findings, []insight{{Statement: "Open SQLite in WAL mode", Tier: "shu", Field: "storage", Findings: []string{"f1", "f2"}}})

	plan, err := ig.Research(ctx, research.Request{Report: rep, Action: "plan"})
	if err != nil {
		t.Fatal(err)
	}
	if !plan.DryRun || plan.Anchor != "repo" || plan.New != 3 || plan.Written != 0 || plan.Sources != 1 || plan.Findings != 3 {
		t.Fatalf("plan: %+v", plan)
	}
	if !repeats(plan.Evidence) || plan.Evidence[1].DuplicateOf != "" || !strings.Contains(plan.Message, "1 of them repeated another finding's content") {
		t.Errorf("plan's repeats: %+v, %q", plan.Evidence, plan.Message)
	}
	if ev, err := f.Store.EvidenceByIDs(ctx, []string{plan.Evidence[0].ID}); err != nil || len(ev) != 0 {
		t.Fatalf("a plan wrote evidence: %v, %v", ev, err)
	}
	if len(plan.Suggestions) != 1 || !strings.Contains(plan.Suggestions[0].Command, "--supporting "+plan.Evidence[0].ID+","+plan.Evidence[1].ID) || plan.Suggestions[0].Note != "" {
		t.Errorf("suggestions: %+v", plan.Suggestions)
	}

	got, err := ig.Research(ctx, research.Request{Report: rep, Action: "ingest"})
	if err != nil {
		t.Fatal(err)
	}
	if got.DryRun || got.Written != 3 || got.Duplicates != 1 || !repeats(got.Evidence) {
		t.Fatalf("ingest: %+v", got)
	}
	for i := range plan.Evidence {
		if got.Evidence[i].ID != plan.Evidence[i].ID {
			t.Errorf("finding %d: ingested as %s, planned as %s", i, got.Evidence[i].ID, plan.Evidence[i].ID)
		}
	}
	rows, err := f.Store.EvidenceByIDs(ctx, []string{got.Evidence[0].ID, got.Evidence[1].ID, got.Evidence[2].ID})
	if err != nil || len(rows) != 3 {
		t.Fatalf("rows: %v, %v", rows, err)
	}
	for id, ev := range rows {
		if ev.Provenance != "research" || ev.AnchorID != anchor.ID(f.Loc.Identity(domain.AnchorRepo)) {
			t.Errorf("row %s: provenance %s at %s; want research at the repo anchor", id, ev.Provenance, ev.AnchorID)
		}
	}
	dup := got.Evidence[0]
	if dup.DuplicateOf == "" {
		dup = got.Evidence[2]
	}
	if orig, err := f.Store.DuplicateOf(ctx, dup.ID); err != nil || orig != dup.DuplicateOf {
		t.Errorf("original of the repeat %s: %s, %v; want %s", dup.ID, orig, err, dup.DuplicateOf)
	}

	again, err := ig.Research(ctx, research.Request{Report: rep, Action: "ingest"})
	if err != nil || again.Written != 0 || again.New != 0 || !again.Evidence[0].Exists || !strings.Contains(again.Message, "nothing to write") {
		t.Errorf("second ingest: %+v, %v; want nothing written", again, err)
	}

	// A finding of the same id with other content is refused: evidence is
	// never edited.
	changed := append([]finding(nil), findings...)
	changed[1].Content = "busy_timeout is ignored"
	_, err = ig.Research(ctx, research.Request{Report: report(t, "rep-1", "", changed, nil), Action: "ingest"})
	wantKind(t, "changed finding", err, hosterr.KindInvalid, `finding "f2" of report "rep-1" was ingested before`)
}

// The same report gives other ids at another anchor (another repository
// writes rows of its own), and the same at the same one.
func TestEvidenceIDsBelongToTheAnchor(t *testing.T) {
	ctx := context.Background()
	a := jobtest.New(t, jobtest.Options{Git: true, Remote: "https://github.com/acme/a.git"})
	b := jobtest.New(t, jobtest.Options{Git: true, Remote: "https://github.com/acme/b.git"})
	rep := report(t, "rep-1", "general", findings[:2], nil)
	plan := func(f *jobtest.Fixture, anchorKind string) research.Plan {
		t.Helper()
		p, err := ingester(f, 10).Research(ctx, research.Request{Report: rep, Action: "plan", Anchor: anchorKind})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	pa, pb := plan(a, ""), plan(b, "")
	if pa.Evidence[0].ID == pb.Evidence[0].ID || pa.Evidence[0].ID == pa.Evidence[1].ID {
		t.Errorf("ids: A %v, B %v; want each finding and each repository its own", pa.Evidence, pb.Evidence)
	}
	if again := plan(a, ""); again.Evidence[0].ID != pa.Evidence[0].ID {
		t.Errorf("the same plan twice gave %s then %s", pa.Evidence[0].ID, again.Evidence[0].ID)
	}
	ga, gb := plan(a, "global"), plan(b, "global")
	if ga.Anchor != "global" || ga.Evidence[0].ID != gb.Evidence[0].ID || ga.Evidence[0].ID == pa.Evidence[0].ID {
		t.Errorf("global ids: A %s, B %s, A's repo %s; want one global id, not the repo's", ga.Evidence[0].ID, gb.Evidence[0].ID, pa.Evidence[0].ID)
	}
	for _, id := range []string{pa.Evidence[0].ID, ga.Evidence[0].ID} {
		if !strings.HasPrefix(id, "ev_") || len(id) != len("ev_")+26 {
			t.Errorf("id %q is not an evidence id of 26 digits", id)
		}
	}
}

// A report about a project stays at the repo anchor; outside git only a
// general report lands (at the global anchor).
func TestResearchAnchorFollowsAbout(t *testing.T) {
	ctx := context.Background()
	f := jobtest.New(t, jobtest.Options{Git: true})
	_, err := ingester(f, 10).Research(ctx, research.Request{Report: report(t, "rep-1", "", findings[:1], nil), Action: "plan", Anchor: "global"})
	wantKind(t, "project report at global", err, hosterr.KindInvalid, "is about a project")
	if p, err := ingester(f, 10).Research(ctx, research.Request{Report: report(t, "rep-1", "", findings[:1], nil), Action: "validate", Anchor: "worktree"}); err != nil || p.Anchor != "worktree" {
		t.Errorf("worktree plan: %+v, %v", p, err)
	}
	plain := jobtest.New(t, jobtest.Options{})
	_, err = ingester(plain, 10).Research(ctx, research.Request{Report: report(t, "rep-1", "", findings[:1], nil), Action: "plan"})
	wantKind(t, "project report outside git", err, hosterr.KindInvalid, "not inside a git checkout")
	p, err := ingester(plain, 10).Research(ctx, research.Request{Report: report(t, "rep-1", "general", findings[:1], nil), Action: "ingest"})
	if err != nil || p.Anchor != "global" || p.Written != 1 {
		t.Errorf("general report outside git: %+v, %v", p, err)
	}
}

// The default palace.research lets an agent validate and plan, not ingest.
func TestAgentIngestIsRefusedByPolicy(t *testing.T) {
	ctx := context.Background()
	f := jobtest.New(t, jobtest.Options{Git: true, Agent: true})
	rep := report(t, "rep-1", "", findings[:1], nil)
	p, err := ingester(f, 10).Research(ctx, research.Request{Report: rep, Action: "plan"})
	if err != nil || p.New != 1 {
		t.Fatalf("agent plan: %+v, %v", p, err)
	}
	_, err = ingester(f, 10).Research(ctx, research.Request{Report: rep, Action: "ingest"})
	wantKind(t, "agent ingest", err, hosterr.KindMode, "palace.research refused to ingest report rep-1")
	if rows, _ := f.Store.EvidenceByIDs(ctx, []string{p.Evidence[0].ID}); len(rows) != 0 {
		t.Errorf("a refused ingest wrote %v", rows)
	}
}

// A dao insight is suggested with a note: research alone cannot make it
// authoritative.
func TestDaoSuggestionSaysResearchIsNotEnough(t *testing.T) {
	f := jobtest.New(t, jobtest.Options{Git: true})
	rep := report(t, "rep-1", "", findings[:2], []insight{{Statement: "Never disable WAL", Tier: "dao_ren", Field: "storage", Findings: []string{"f2"}}})
	p, err := ingester(f, 10).Research(context.Background(), research.Request{Report: rep, Action: "validate"})
	if err != nil || len(p.Suggestions) != 1 {
		t.Fatalf("validate: %+v, %v", p, err)
	}
	s := p.Suggestions[0]
	if !strings.Contains(s.Note, "research alone cannot make a dao card authoritative") || len(s.Supporting) != 1 || s.Supporting[0] != p.Evidence[1].ID {
		t.Errorf("dao suggestion: %+v", s)
	}
}

// Bad input is KindInvalid naming the JSON path at fault.
func TestReportValidation(t *testing.T) {
	ctx := context.Background()
	f := jobtest.New(t, jobtest.Options{Git: true})
	ig := ingester(f, 10)
	for _, c := range []struct{ doc, want string }{
		{`{`, "not valid JSON"},
		{`{} {}`, "more than one JSON value"},
		{`[]`, "a report is a JSON object"},
		{`{"title":"t","findings":[]}`, "report_id: missing"},
		{`{"report_id":"-bad","title":"t"}`, "is not an id"},
		{`{"report_id":"r","title":"t","about":"weather","findings":[{"id":"a","content":"c","source":"https://x"}]}`, "about: \"weather\" is not valid"},
		{`{"report_id":"r","title":"t"}`, "findings: missing or empty"},
		{`{"report_id":"r","title":"t","sources":{}}`, "sources: must be an array"},
		{`{"report_id":"r","title":"t","sources":[1]}`, "sources[0]: a source is an object"},
		{`{"report_id":"r","title":"t","sources":[{"id":"s"}]}`, "sources[0].url: missing"},
		{`{"report_id":"r","title":"t","sources":[{"id":"s","url":"not a url"}]}`, "is not a URL or a path"},
		{`{"report_id":"r","title":"t","sources":[{"id":"s","url":"https://x"},{"id":"s","url":"https://y"}]}`, "sources[1].id: duplicate id"},
		{`{"report_id":"r","title":"t","findings":["x"]}`, "findings[0]: a finding is an object"},
		{`{"report_id":"r","title":"t","findings":[{"id":"a","content":"c"}]}`, "findings[0].source: missing"},
		{`{"report_id":"r","title":"t","findings":[{"id":"a","content":"c","source":"nope nope"}]}`, "neither a source id"},
		{`{"report_id":"r","title":"t","findings":[{"id":"a","content":"c","source":"https://x"},{"id":"a","content":"d","source":"https://x"}]}`, "findings[1].id: duplicate id"},
		{`{"report_id":"r","title":"t","findings":[{"id":"a","content":"c","source":"https://x","tags":[1]}]}`, "findings[0].tags[0]: a tag is a string"},
		{`{"report_id":"r","title":"t","findings":[{"id":"a","content":7,"source":"https://x"}]}`, "findings[0].content: must be a string"},
		{`{"report_id":"r","title":"t","findings":[{"id":"a","content":"c","source":"https://x"}],"candidate_insights":[{"statement":"s","tier":"zen","findings":["a"]}]}`, "is not a tier"},
		{`{"report_id":"r","title":"t","findings":[{"id":"a","content":"c","source":"https://x"}],"candidate_insights":[{"statement":"s","tier":"shu"}]}`, "candidate_insights[0].findings: missing"},
		{`{"report_id":"r","title":"t","findings":[{"id":"a","content":"c","source":"https://x"}],"candidate_insights":[{"statement":"s","tier":"shu","findings":["b"]}]}`, "is not the id of a finding"},
		{`{"report_id":"r","title":"t","findings":[{"id":"a","content":"c","source":"https://x"}],"candidate_insights":[{"statement":"` + strings.Repeat("s", 300) + `","tier":"shu","findings":["a"]}]}`, "over the 280 of a card's statement"},
	} {
		_, err := ig.Research(ctx, research.Request{Report: []byte(c.doc), Name: "r.json", Action: "validate"})
		wantKind(t, c.doc, err, hosterr.KindInvalid, c.want)
	}
	_, err := ig.Research(ctx, research.Request{Report: []byte(`{}`), Action: "publish"})
	wantKind(t, "unknown action", err, hosterr.KindInvalid, `action "publish" is not valid`)
	_, err = ig.Research(ctx, research.Request{Report: make([]byte, research.MaxReportBytes+1), Action: "validate"})
	wantKind(t, "report over the limit", err, hosterr.KindInvalid, "over the 8 MiB limit")
	// A finding the evidence intake refuses names its path.
	secret := `{"report_id":"r","title":"t","findings":[{"id":"a","content":"key AKIAIOSFODNN7EXAMPLE","source":"https://x"}]}`
	_, err = ig.Research(ctx, research.Request{Report: []byte(secret), Name: "r.json", Action: "validate"})
	if err == nil || !strings.Contains(err.Error(), "r.json: findings[0].") {
		t.Errorf("secret in a finding: %v; want refused naming r.json: findings[0]", err)
	}
}
