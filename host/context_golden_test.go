package host_test

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/pack"
)

func init() {
	// Shared with any other golden test of the package that defines it first.
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files under testdata/")
	}
}

func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if updating() {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update to create it)", err, t.Name())
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file (go test -run %s -update rewrites it); got:\n%s", path, t.Name(), got)
	}
}

// goldenPalace builds the pack scenario of the golden files: every lane,
// a transient instruction, a budget trim, evidence, a duplicate published
// copy, the dao_tian limit and a distill suggestion.
func goldenPalace(t *testing.T) (*cxEnv, map[string]*host.Host) {
	ctx := context.Background()
	e := newCxEnv(t)
	a := e.open(e.repo("a", "https://github.com/acme/a"), host.Human)
	b := e.open(e.repo("b", "https://github.com/acme/b"), host.Human)
	e.card(a, cxCard{statement: "Evidence is append-only: never edit or delete a recorded row", tier: "dao_ren", field: "storage",
		scopeFields: []string{"storage"}, intents: []string{"debug"}, persistence: "foundational",
		content: "Corrections are new evidence that contradicts the old row.\nThe database refuses UPDATE and DELETE on evidence."})
	for i, s := range []string{"Keep write transactions short", "Checkpoint the WAL after a bulk import", "Hold no lock across a network call"} {
		c := scoped(s, "shu")
		c.content = "Why: " + s + " — writers queue behind the busy timeout."
		c.renderPref = "inline_full"
		id := e.card(a, c)
		for range i {
			if err := a.Pack().RecordViews(ctx, id); err != nil {
				t.Fatal(err)
			}
		}
	}
	wal := e.card(a, scoped("Open SQLite in WAL mode with a busy timeout", "qi").at("repo"))
	if _, err := a.Publish(ctx, wal, host.PublishRequest{To: "global", Reason: "holds for every repository"}); err != nil {
		t.Fatal(err)
	}
	e.card(a, scoped("Measure before optimizing", "dao_tian").at("global"))
	e.card(a, scoped("State the uncertainty with the answer", "dao_tian").at("global"))
	e.card(a, cxCard{statement: "Name the go test that covers a store change", tier: "qi", field: "testing",
		paths: []string{"store/**"}, langs: []string{"go"}, intents: []string{"debug", "storage"}})
	e.card(a, cxCard{statement: "Prefer small commits", tier: "qi"})
	e.card(a, cxCard{statement: "Docs use sentence case", tier: "qi", paths: []string{"docs/**"}})
	for i := range 5 {
		e.ev(a, "import stalled behind a checkpoint, run "+itoa(i), "imports", "log:import-"+itoa(i))
	}
	e.card(b, scoped("B: the importer retries on SQLITE_BUSY", "shu").at("repo"))
	// An unscoped card written 60 days ago and never applied: inactivity
	// (−4) cools it from a reference (20) to inspector_only.
	now := e.now
	e.now = now.Add(-60 * 24 * time.Hour)
	e.card(e.open(e.root+"/a", host.Human), cxCard{statement: "Write commit subjects in the imperative", tier: "qi"})
	e.now = now
	return e, map[string]*host.Host{"a": a, "b": b}
}

func TestContextGolden(t *testing.T) {
	ctx := context.Background()
	e, hosts := goldenPalace(t)
	tests := []struct {
		name string
		req  pack.ContextRequest
	}{
		{"context_pack", pack.ContextRequest{
			Query: "WAL checkpoint import", File: "store/store.go", Field: "storage", Intents: []string{"debug", "storage"},
			Instructions: []string{"Answer in plain text, no Markdown."}, Budget: 2000, IncludeEvidence: true, Explain: true,
			RequestID: "rq_golden",
		}},
		{"context_all_repos", pack.ContextRequest{
			File: "store/store.go", Field: "storage", Intents: []string{"debug", "storage"}, AllRepos: true, DryRun: true,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := hosts["a"].Pack().Context(ctx, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			nz := newNormalizer(e, hosts)
			raw, err := json.MarshalIndent(p, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name+".md", nz.apply(p.Rendered))
			golden(t, tt.name+".json", nz.apply(string(raw))+"\n")
		})
	}
}

func TestBriefGolden(t *testing.T) {
	e, hosts := goldenPalace(t)
	b, err := hosts["a"].Pack().Brief(context.Background(), pack.BriefRequest{
		Query: "WAL checkpoint import", File: "store/store.go", Field: "storage", Intents: []string{"debug", "storage"},
	})

	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "brief.json", newNormalizer(e, hosts).apply(string(raw))+"\n")
}
