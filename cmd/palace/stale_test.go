package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const staleDB = `package store

func Open(path string) (*DB, error) {
	return open(path, "wal")
}

func Close(db *DB) error { return db.close() }
`

// staleEnv is a checkout with store/db.go committed and a promoted qi card
// whose supporting evidence cites store/db.go#L3-L5 (its verification
// cites no code, so the supporting evidence is what it is checked
// against).
type staleEnv struct {
	*env
	card, cited string
}

func newStaleEnv(t *testing.T) *staleEnv {
	e := newEnv(t)
	e.write("store/db.go", []byte(staleDB))
	e.git("add", "-A")
	e.git("commit", "-q", "-m", "db")
	s := &staleEnv{env: e}
	s.cited = e.record("Open always opens the database in WAL mode", "--source-ref", "store/db.go#L3-L5", "--field", "storage")
	ver := e.record("the WAL test passes", "--field", "storage")
	s.card = e.distill("Open opens the database in WAL mode", "qi", "--supporting", s.cited, "--field", "storage",
		"--scope-path", "store/**", "--trigger-pattern", `open\(path`)
	e.ok("promote", s.card, "--reason", "checked", "--verification", ver)
	return s
}

func (e *env) commitAll(msg string) {
	e.t.Helper()
	e.git("add", "-A")
	e.git("commit", "-q", "-m", msg)
}

type packItem struct {
	ID         string         `json:"id"`
	RenderForm string         `json:"render_form"`
	Salience   int            `json:"salience"`
	Breakdown  map[string]int `json:"salience_breakdown"`
	Stale      *struct {
		Reason    string `json:"reason"`
		ReviewDue string `json:"review_due"`
		Citations []struct {
			EvidenceID string `json:"evidence_id"`
			Path       string `json:"path"`
			Change     string `json:"change"`
			Detail     string `json:"detail"`
			Line       int    `json:"line"`
			EndLine    int    `json:"end_line"`
		} `json:"citations"`
	} `json:"stale"`
}

func (e *env) pack(args ...string) (items []packItem, rendered string) {
	e.t.Helper()
	var p struct {
		Items    []packItem `json:"items"`
		Rendered string     `json:"rendered"`
	}
	out := e.ok(append([]string{"context", "--format", "json", "--dry-run"}, args...)...)
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		e.t.Fatal(err)
	}
	return p.Items, p.Rendered
}

func itemOf(t *testing.T, items []packItem, id string) packItem {
	t.Helper()
	for _, it := range items {
		if it.ID == id {
			return it
		}
	}
	t.Fatalf("%s is not in the pack: %+v", id, items)
	return packItem{}
}

// The bar: evidence citing store/db.go#L3-L5 under a promoted card; moving
// the lines leaves it fresh; changing and committing them makes the next
// pack mark it stale naming the file, audit lists it with the repair, and
// palace verify clears it.
func TestCardStaleWhenCitedLinesChange(t *testing.T) {
	e := newStaleEnv(t)
	items, _ := e.pack("--file", "store/db.go")
	if it := itemOf(t, items, e.card); it.Stale != nil {
		t.Fatalf("fresh card is stale: %+v", it.Stale)
	}

	// Moved down by three lines and committed: followed, not stale.
	e.write("store/db.go", []byte(strings.Replace(staleDB, "package store\n", "package store\n\n// Package store keeps the data.\n", 1)))
	e.commitAll("doc")
	items, _ = e.pack("--file", "store/db.go")
	if it := itemOf(t, items, e.card); it.Stale != nil {
		t.Fatalf("moved lines made the card stale: %+v", it.Stale)
	}

	// The cited lines change.
	e.write("store/db.go", []byte(strings.Replace(staleDB, `open(path, "wal")`, `open(path, "delete")`, 1)))
	e.commitAll("journal mode delete")
	items, rendered := e.pack("--file", "store/db.go")
	it := itemOf(t, items, e.card)
	if it.Stale == nil || len(it.Stale.Citations) != 1 {
		t.Fatalf("card is not stale after its lines changed: %+v", it)
	}
	c := it.Stale.Citations[0]
	if c.Path != "store/db.go" || c.Change != "changed" || c.Detail != "lines 3–5 changed" || c.EvidenceID != e.cited {
		t.Errorf("stale citation = %+v", c)
	}
	if it.Breakdown["stale"] != -10 {
		t.Errorf("salience breakdown %v: want stale -10", it.Breakdown)
	}
	for _, want := range []string{"**stale**: store/db.go#L3-L5: lines 3–5 changed since " + e.cited, "palace verify " + e.card} {
		if !strings.Contains(rendered, want) {
			t.Errorf("rendered pack lacks %q:\n%s", want, rendered)
		}
	}

	if brief := e.ok("brief", "--file", "store/db.go"); !strings.Contains(brief, e.card+" rests on code that changed: store/db.go#L3-L5") {
		t.Errorf("brief does not say the card is stale:\n%s", brief)
	}
	if show := e.ok("card", "show", e.card); !strings.Contains(show, "stale") || !strings.Contains(show, "palace verify "+e.card) {
		t.Errorf("card show:\n%s", show)
	}

	audit := e.ok("audit")
	for _, want := range []string{"warning stale: the code it cites changed: store/db.go#L3-L5", "stale: 1 card no longer matches",
		"repair verify", "palace verify " + e.card, "repair demote"} {
		if !strings.Contains(audit, want) {
			t.Errorf("audit lacks %q:\n%s", want, audit)
		}
	}
	var rep struct {
		Stale []struct {
			ID     string `json:"id"`
			Repair []struct{ Action string }
		} `json:"stale"`
	}
	if err := json.Unmarshal([]byte(e.ok("audit", "--format", "json", "--warning", "stale")), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Stale) != 1 || rep.Stale[0].ID != e.card || len(rep.Stale[0].Repair) != 2 {
		t.Errorf("audit stale section = %+v", rep.Stale)
	}

	out := e.ok("verify", e.card)
	for _, want := range []string{"verified " + e.card, "changed  store/db.go#L3-L5", "it was stale; it is fresh now"} {
		if !strings.Contains(out, want) {
			t.Errorf("verify output lacks %q:\n%s", want, out)
		}
	}
	items, _ = e.pack("--file", "store/db.go")
	if it := itemOf(t, items, e.card); it.Stale != nil {
		t.Errorf("still stale after palace verify: %+v", it.Stale)
	}
	if strings.Contains(e.ok("audit"), "stale:") {
		t.Error("audit lists the card as stale after palace verify")
	}
	show := e.jsonOf("card", "show", e.card)
	if show["status"] != "promoted" {
		t.Errorf("verify changed the status: %v", show["status"])
	}
	// Verifying the same code again records nothing new.
	if out := e.ok("verify", e.card); !strings.Contains(out, "is its verification of this code already") {
		t.Errorf("second verify: %s", out)
	}
	// The verification is now what the card is checked against: the
	// next change of those lines makes it stale again.
	e.write("store/db.go", []byte(strings.Replace(staleDB, `open(path, "wal")`, `open(path, "truncate")`, 1)))
	items, _ = e.pack("--file", "store/db.go")
	if it := itemOf(t, items, e.card); it.Stale == nil || it.Stale.Citations[0].EvidenceID == e.cited {
		t.Errorf("after another change: %+v, want stale against the verification", it.Stale)
	}
}

func TestVerifyRefusals(t *testing.T) {
	e := newStaleEnv(t)
	wantCode(t, e.run("verify", "kc_nope"), 2, "kc_nope")
	note := e.record("a note about naming")
	plain := e.distill("Name things well", "shu", "--supporting", note)
	wantCode(t, e.run("verify", plain), 2, "cites no file of this checkout", "--evidence")
	wantCode(t, e.run("verify", e.card, "--evidence", note), 2, "cites no file of this checkout")

	// The cited file is renamed by git: followed.
	e.git("mv", "store/db.go", "store/database.go")
	e.commitAll("rename")
	items, _ := e.pack("--file", "store/database.go")
	if it := itemOf(t, items, e.card); it.Stale != nil {
		t.Fatalf("renamed file made the card stale: %+v", it.Stale)
	}
	out := e.ok("verify", e.card)
	if !strings.Contains(out, "moved  store/database.go#L3-L5") {
		t.Errorf("verify of a renamed file: %s", out)
	}

	// Deleted: the code is gone, verify says so (exit 1) and writes
	// nothing; evidence citing where it went repairs it.
	e.git("rm", "-q", "store/database.go")
	opened := "package store\n\n// open is where Open went.\nfunc open(path, mode string) (*DB, error) {\n\treturn dial(path, mode)\n}\n"
	e.write("store/open.go", []byte(opened))
	e.commitAll("split")
	items, _ = e.pack("--file", "store/open.go")
	if it := itemOf(t, items, e.card); it.Stale == nil || it.Stale.Citations[0].Change != "deleted" {
		t.Fatalf("deleted file: %+v", it.Stale)
	}
	before := e.ok("card", "show", e.card)
	wantCode(t, e.run("verify", e.card), 1, "the code it cites is gone", "store/database.go#L3-L5: the file was deleted", "--evidence EV")
	if after := e.ok("card", "show", e.card); after != before {
		t.Errorf("a refused verify changed the card:\n%s\n---\n%s", before, after)
	}
	moved := e.record("Open moved to open.go", "--source-ref", "store/open.go#L3-L5")
	e.ok("verify", e.card, "--evidence", moved)
	items, _ = e.pack("--file", "store/open.go")
	if it := itemOf(t, items, e.card); it.Stale != nil {
		t.Errorf("stale after verify --evidence: %+v", it.Stale)
	}

	// Agent mode may verify (a verification is evidence).
	e.write("store/open.go", []byte(strings.Replace(opened, "dial", "connect", 1)))
	r := e.run("--mode", "agent", "verify", e.card)
	wantCode(t, r, 0)
}

// A stale card loses inline priority against a fresh card the request is
// as much about: with one core and one scoped slot for three cards alike,
// the two oldest are inline until the oldest goes stale; then the youngest
// takes its place.
func TestStaleCardLosesInlinePriority(t *testing.T) {
	e := newEnv(t)
	e.write("store/db.go", []byte(staleDB))
	e.commitAll("db")
	if err := os.MkdirAll(filepath.Join(e.home, "policies"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.home, "policies", "lanes.json"), []byte(`{"core_inline_limit": 1, "scoped_inline_limit": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// Cards alike in every word the request could match, each saying
	// something else besides (so no two are near-duplicates, which a pack
	// would not inline together).
	card := func(words, ref string) string {
		sup := e.record("storage handles note "+words, "--source-ref", ref, "--field", "storage")
		ver := e.record("storage handles check "+words, "--field", "storage")
		id := e.distill("Storage handles stay open: "+words, "qi", "--supporting", sup, "--field", "storage", "--scope-path", "store/**")
		e.ok("promote", id, "--reason", "checked", "--verification", ver)
		return id
	}
	// Each cites its own line, so one can be made stale alone.
	edits := map[string][2]string{
		card("alpha bravo charlie delta", "store/db.go#L3"): {"func Open(path string)", "func Open(p string)"},
		card("echo foxtrot golf hotel", "store/db.go#L4"):   {`"wal"`, `"delete"`},
		card("india juliet kilo lima", "store/db.go#L7"):    {"db.close()", "db.shut()"},
	}
	items, _ := e.pack("storage handles", "--file", "store/db.go")
	var inline, ref []string
	for _, it := range items {
		if it.RenderForm == "ref_only" {
			ref = append(ref, it.ID)
		} else {
			inline = append(inline, it.ID)
		}
		if it.Salience != items[0].Salience {
			t.Fatalf("the cards are not alike: %+v", items)
		}
	}
	if len(inline) != 2 || len(ref) != 1 {
		t.Fatalf("before: %+v, want two inline and one reference", items)
	}
	target := inline[0]
	e.write("store/db.go", []byte(strings.Replace(staleDB, edits[target][0], edits[target][1], 1)))
	items, _ = e.pack("storage handles", "--file", "store/db.go")
	if got := itemOf(t, items, target); got.RenderForm != "ref_only" || got.Stale == nil {
		t.Errorf("stale card: %+v, want a reference", got)
	}
	if got := itemOf(t, items, ref[0]); got.RenderForm == "ref_only" || got.Stale != nil {
		t.Errorf("fresh card: %+v, want inline in the stale card's place", got)
	}
}

// A review date that passed shows the same way: the item carries stale
// with the date, not only its age.
func TestReviewDateMakesCardStale(t *testing.T) {
	e := newEnv(t)
	sup := e.record("seen it")
	ver := e.record("checked it")
	id := e.distill("Review me", "shu", "--supporting", sup, "--review-after", "2020-01-01")
	e.ok("promote", id, "--reason", "ok", "--verification", ver)
	items, rendered := e.pack("review me")
	it := itemOf(t, items, id)
	if it.Stale == nil || it.Stale.ReviewDue == "" || !strings.Contains(it.Stale.Reason, "review was due 2020-01-01") {
		t.Fatalf("item = %+v, want stale with the review date", it)
	}
	if !strings.Contains(rendered, "**stale**: review was due 2020-01-01") {
		t.Errorf("rendered:\n%s", rendered)
	}
	if !strings.Contains(e.ok("audit"), "repair set_review_after") {
		t.Error("audit has no repair for the passed review date")
	}
}
