package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeReport writes a report with n findings and returns its path.
func writeReport(t *testing.T, dir, name string, n int, edit func(map[string]any)) string {
	t.Helper()
	var findings []any
	for i := range n {
		findings = append(findings, map[string]any{"id": fmt.Sprintf("f%03d", i), "content": fmt.Sprintf("Finding %d: edge caches keep stale pages for %d seconds", i, i), "source": "s1", "field": "caching"})
	}
	r := map[string]any{"report_id": "rr-cache-2026", "title": "Edge caching",
		"sources":            []any{map[string]any{"id": "s1", "url": "https://example.com/caching", "title": "Caching guide"}, map[string]any{"id": "s2", "path": "docs/caching.md"}},
		"findings":           findings,
		"candidate_insights": []any{map[string]any{"statement": "Purge the edge cache on deploy", "tier": "shu", "findings": []any{"f001", "f002"}}}}
	if edit != nil {
		edit(r)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// evidenceTotal counts the evidence rows in the database, as a person sees
// them (an agent reads across repositories only where a person allowed it).
func (e *env) evidenceTotal() int {
	e.t.Helper()
	vars := e.vars
	defer func() { e.vars = vars }()
	e.vars = nil
	return int(e.jsonOf("evidence", "list", "--anchor", "all", "--all-repos", "--limit", "1")["total"].(float64))
}

func TestResearchIngestIsEvidenceFirstAndIdempotent(t *testing.T) {
	e := newEnv(t)
	rep := writeReport(t, t.TempDir(), "r.json", 200, nil)
	if got := e.jsonOf("research", "validate", rep); got["findings"] != float64(200) || got["written"] != float64(0) {
		t.Fatalf("validate: %v", got)
	}
	plan := e.jsonOf("research", "ingest", "--dry-run", rep)
	if n := e.evidenceTotal(); n != 0 {
		t.Fatalf("a dry run wrote %d evidence rows", n)
	}
	var planned []string
	for _, x := range plan["evidence"].([]any) {
		planned = append(planned, x.(map[string]any)["id"].(string))
	}
	sugg := plan["suggestions"].([]any)[0].(map[string]any)
	for _, id := range sugg["supporting"].([]any) {
		if !slices.Contains(planned, id.(string)) {
			t.Errorf("suggestion cites %v, not a planned id", id)
		}
	}
	if !strings.Contains(sugg["command"].(string), "palace distill") {
		t.Errorf("suggestion command %v", sugg["command"])
	}

	first := e.jsonOf("research", "ingest", rep)
	if first["written"] != float64(200) || e.evidenceTotal() != 200 {
		t.Fatalf("first ingest wrote %v, %d rows in the database", first["written"], e.evidenceTotal())
	}
	second := e.run("research", "ingest", rep)
	wantCode(t, second, 0)
	if !strings.Contains(second.stdout, "nothing to write") || !strings.Contains(second.stdout, "0 rows written") || e.evidenceTotal() != 200 {
		t.Errorf("second ingest: %s (%d rows)", second.stdout, e.evidenceTotal())
	}
	// The planned ids are the rows, research provenance at the repo anchor,
	// citing the source URL.
	ev := e.jsonOf("evidence", "show", planned[7])
	if ev["provenance"] != "research" || ev["source_ref"] != "https://example.com/caching" || ev["anchor"].(map[string]any)["kind"] != "repo" {
		t.Errorf("evidence %s: %v", planned[7], ev)
	}
	// Research cannot make a dao_tian card authoritative by itself, even
	// linked in every role a person would fill.
	card := e.distill("Stale pages are the price of every cache", "dao_tian",
		"--supporting", strings.Join(planned[0:3], ","), "--verification", strings.Join(planned[3:5], ","), "--teaching", planned[5])
	r := e.run("gate", card, "--format", "json")
	wantCode(t, r, 1)
	if !strings.Contains(r.stdout, "floor: research evidence alone cannot make a dao_tian card authoritative") {
		t.Errorf("gate: %s", r.stdout)
	}
	wantCode(t, e.run("promote", card, "--reason", "research says so"), 1, "research evidence alone")
}

func TestResearchBadInputWritesNothing(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	big := strings.Repeat("x", 1000)
	for _, tc := range []struct {
		name string
		edit func(map[string]any)
		want string
	}{
		{"no report_id", func(r map[string]any) { delete(r, "report_id") }, "report_id: missing"},
		{"finding without source", func(r map[string]any) { delete(r["findings"].([]any)[3].(map[string]any), "source") }, "findings[3].source: missing"},
		{"source not a URL or path", func(r map[string]any) { r["sources"].([]any)[0].(map[string]any)["url"] = "see the docs" }, `sources[0].url: "see the docs" is not a URL or a path`},
		{"unknown source id", func(r map[string]any) { r["findings"].([]any)[2].(map[string]any)["source"] = "s9" }, "findings[2].source"},
		{"duplicate finding ids", func(r map[string]any) { r["findings"].([]any)[4].(map[string]any)["id"] = "f001" }, `findings[4].id: duplicate id "f001" (first at findings[1])`},
		{"insight cites no finding", func(r map[string]any) {
			r["candidate_insights"].([]any)[0].(map[string]any)["findings"] = []any{"f999"}
		}, "candidate_insights[0].findings[0]"},
		{"10 MB of findings", func(r map[string]any) {
			fs := r["findings"].([]any)
			for i := range 10_500 {
				fs = append(fs, map[string]any{"id": fmt.Sprintf("g%d", i), "content": big, "source": "s1"})
			}
			r["findings"] = fs
		}, "over the size limit of 8 MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := writeReport(t, dir, strings.ReplaceAll(tc.name, " ", "_")+".json", 10, tc.edit)
			for _, args := range [][]string{{"research", "validate", p}, {"research", "ingest", p}} {
				wantCode(t, e.run(args...), 2, tc.want)
			}
			if n := e.evidenceTotal(); n != 0 {
				t.Errorf("bad input wrote %d rows", n)
			}
		})
	}
	p := writeReport(t, dir, "ok.json", 3, nil)
	wantCode(t, e.run("research", "ingest", "--anchor", "global", p), 2, "about: report rr-cache-2026 is about a project")
	e.vars = []string{"PALACE_MODE=agent"}
	wantCode(t, e.run("research", "ingest", p), 3, "palace.research refused to ingest")
	wantCode(t, e.run("research", "ingest", "--dry-run", p), 0)
	if n := e.evidenceTotal(); n != 0 {
		t.Errorf("refused ingests wrote %d rows", n)
	}
	// A team policy may let agents ingest (the scaffold: small reports).
	e.vars = nil
	e.ok("policy", "new", "research", "--out", filepath.Join(e.dir, ".palace", "policies"))
	e.vars = []string{"PALACE_MODE=agent"}
	if got := e.jsonOf("research", "ingest", p); got["written"] != float64(3) || e.evidenceTotal() != 3 {
		t.Errorf("agent ingest under the team policy: %v", got)
	}
}

// Research evidence belongs to the anchor it lands at: a second repository
// ingesting a report the first one ingested writes rows of its own, and
// each repository sees its own.
func TestResearchEvidenceIsPerRepository(t *testing.T) {
	e := newEnv(t)
	other := e.secondRepo("other", "git@github.com:acme/other.git")
	rep := writeReport(t, t.TempDir(), "r.json", 5, nil)
	a := e.jsonOf("research", "ingest", rep)
	r := e.runIn(other, nil, "research", "ingest", rep, "--format", "json")
	wantCode(t, r, 0)
	var b map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &b); err != nil {
		t.Fatal(err)
	}
	if a["written"] != float64(5) || b["written"] != float64(5) || e.evidenceTotal() != 10 {
		t.Fatalf("ingests wrote %v and %v, %d rows on record; want 5 each", a["written"], b["written"], e.evidenceTotal())
	}
	idA := a["evidence"].([]any)[0].(map[string]any)["id"].(string)
	idB := b["evidence"].([]any)[0].(map[string]any)["id"].(string)
	if idA == idB {
		t.Fatalf("both repositories got evidence %s", idA)
	}
	// Each sees its own row at its own repo anchor; the other's is not there.
	if ev := e.jsonOf("evidence", "show", idA); ev["anchor"].(map[string]any)["identity"] != "repo:github.com/acme/widgets" {
		t.Errorf("A's evidence: %v", ev)
	}
	wantCode(t, e.run("evidence", "show", idB), 2, "not to this checkout")
	if r := e.runIn(other, nil, "evidence", "show", idB, "--format", "json"); r.code != 0 || !strings.Contains(r.stdout, `"identity": "repo:github.com/acme/other"`) {
		t.Errorf("B's evidence from B: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// Two findings with the same content at one anchor are one piece of
// evidence: the second is written marked a duplicate of the first, and the
// gate counts them once.
func TestResearchIdenticalFindingsCountOnce(t *testing.T) {
	e := newEnv(t)
	rep := writeReport(t, t.TempDir(), "r.json", 3, func(r map[string]any) {
		fs := r["findings"].([]any)
		fs[1].(map[string]any)["content"] = fs[0].(map[string]any)["content"]
		fs[1].(map[string]any)["source"] = "s2"
	})
	plan := e.jsonOf("research", "ingest", "--dry-run", rep)
	if !strings.Contains(plan["message"].(string), "1 of them repeated another finding's content") {
		t.Errorf("plan: %v", plan["message"])
	}
	got := e.jsonOf("research", "ingest", rep)
	ev := got["evidence"].([]any)
	id0, id1 := ev[0].(map[string]any)["id"].(string), ev[1].(map[string]any)["id"].(string)
	dup0, dup1 := ev[0].(map[string]any)["duplicate_of"], ev[1].(map[string]any)["duplicate_of"]
	orig, copyID := id0, id1
	if dup0 != nil {
		orig, copyID = id1, id0
	}
	if got["written"] != float64(3) || got["duplicates"] != float64(1) || (dup0 == nil) == (dup1 == nil) {
		t.Fatalf("ingest: %v", got)
	}
	if shown := e.jsonOf("evidence", "show", copyID); shown["duplicate_of"] != orig {
		t.Errorf("evidence %s: duplicate_of %v, want %s", copyID, shown["duplicate_of"], orig)
	}
	// Ingesting again writes nothing and marks nothing more.
	if again := e.jsonOf("research", "ingest", rep); again["written"] != float64(0) {
		t.Errorf("second ingest: %v", again)
	}
	// A shu card needs one supporting and one verification: the two
	// findings are one piece of evidence, so they cannot be both.
	card := e.distill("Edge caches keep stale pages", "shu", "--field", "caching", "--supporting", orig)
	r := e.run("card", "link", card, "--role", "verification", "--evidence", copyID)
	wantCode(t, r, 2, "whose content it repeats")
	g := e.run("gate", card, "--format", "json")
	wantCode(t, g, 1)
	if !strings.Contains(g.stdout, `"verification": 1`) && !strings.Contains(g.stdout, `"verification":1`) {
		t.Errorf("gate: %s", g.stdout)
	}
}
