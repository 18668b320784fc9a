package host_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/intake"
	"github.com/palacehq/palace/host/pack"
)

// openTriggerHost opens a palace outside git (global anchor only).
func openTriggerHost(t testing.TB) *host.Host {
	t.Helper()
	dir := t.TempDir()
	h, err := host.Open(context.Background(), host.Options{Home: filepath.Join(dir, "home"), Cwd: dir, Mode: host.Human, Actor: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// triggerCard writes an authoritative card with the given trigger.
func triggerCard(t testing.TB, h *host.Host, statement, tier string, scope domain.Scope, trig domain.Trigger) string {
	t.Helper()
	ctx := context.Background()
	ev, err := h.Intake().Record(ctx, intake.RecordRequest{Anchor: "global", Content: "seen: " + statement})
	if err != nil {
		t.Fatal(err)
	}
	c, err := h.Distill(ctx, intake.DistillRequest{Anchor: "global", Statement: statement, Tier: tier, Supporting: []string{ev.ID},
		Scope: scope, Trigger: trig, Direct: true, Status: "promoted"})
	if err != nil {
		t.Fatal(err)
	}
	return c.ID
}

func TestHintsMatchesAndScope(t *testing.T) {
	ctx := context.Background()
	h := openTriggerHost(t)
	sqlID := triggerCard(t, h, "Open SQLite in WAL mode", "qi", domain.Scope{}, domain.Trigger{Patterns: []string{`sql\.Open\(`}})
	pyID := triggerCard(t, h, "Use pathlib", "shu", domain.Scope{Languages: []string{"python"}}, domain.Trigger{Patterns: []string{`os\.path`}})
	dropID := triggerCard(t, h, "Never drop tables by hand", "dao_ren", domain.Scope{}, domain.Trigger{Patterns: []string{`(?i)drop\s+table`}, Intents: []string{"migrate"}})

	text := "package db\n\nfunc open() {\n\tdb, _ := sql.Open(\"sqlite\", p) // os.path\n\t// DROP  TABLE x; sql.Open(again)\n}\n"
	got, err := h.Pack().Hints(ctx, nil, pack.HintsRequest{File: "db/open.go", Text: text})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, m := range got.Matches {
		lines = append(lines, fmt.Sprintf("%d:%d-%d %s %s", m.Line, m.Col, m.EndCol, m.Card.ID, m.Card.Label()))
	}
	want := []string{
		fmt.Sprintf("4:11-20 %s ‹qi› Open SQLite in WAL mode", sqlID),
		fmt.Sprintf("5:5-16 %s ‹dao_ren› Never drop tables by hand", dropID),
	}
	// line 5 also matches sql.Open after the DROP: one match per card and line,
	// and the sql card's match comes later on the line.
	want = append(want, fmt.Sprintf("5:20-29 %s ‹qi› Open SQLite in WAL mode", sqlID))
	if !slices.Equal(lines, want) {
		t.Errorf("matches:\n got %q\nwant %q", lines, want)
	}
	// The python-scoped card matched line 4 textually but not by scope.
	if got.OutOfScope != 1 {
		t.Errorf("OutOfScope = %d, want 1 (the python card %s on a Go file)", got.OutOfScope, pyID)
	}
	py, err := h.Pack().Hints(ctx, nil, pack.HintsRequest{File: "tool.py", Text: "import os.path\n"})
	if err != nil {
		t.Fatal(err)
	}
	if len(py.Matches) != 1 || py.Matches[0].Card.ID != pyID || py.Matches[0].Line != 1 || py.Matches[0].Col != 8 {
		t.Errorf("python file matches = %+v, want %s at 1:8", py.Matches, pyID)
	}

	set, err := h.Pack().CompileTriggers(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tagged := set.Tagged("MIGRATE"); len(tagged) != 1 || tagged[0].ID != dropID {
		t.Errorf("Tagged(MIGRATE) = %+v, want %s", tagged, dropID)
	}
}

func TestHintsSkipsCandidatesAndLongLines(t *testing.T) {
	ctx := context.Background()
	h := openTriggerHost(t)
	ev, err := h.Intake().Record(ctx, intake.RecordRequest{Anchor: "global", Content: "seen"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Distill(ctx, intake.DistillRequest{Anchor: "global", Statement: "candidate only", Tier: "qi", Supporting: []string{ev.ID},
		Trigger: domain.Trigger{Patterns: []string{"needle"}}}); err != nil {
		t.Fatal(err)
	}
	id := triggerCard(t, h, "authoritative", "qi", domain.Scope{}, domain.Trigger{Patterns: []string{"needle"}})
	long := strings.Repeat("x", pack.MaxTriggerLineBytes) + "needle"
	got, err := h.Pack().Hints(ctx, nil, pack.HintsRequest{File: "a.txt", Text: long + "\r\nneedle\r\n"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Matches) != 1 || got.Matches[0].Line != 2 || got.Matches[0].Card.ID != id || got.Matches[0].EndCol != 7 {
		t.Errorf("matches = %+v, want only %s on line 2 cols 1-7 (the over-long line skipped, the candidate ignored)", got.Matches, id)
	}
}

// TestTriggerPrefilterAgreesWithRegexp checks the literal prefilter never
// hides a match: for tricky patterns (case folding with non-ASCII orbits,
// alternations, repeats, classes) and random lines, Match equals running
// every regexp on every line.
func TestTriggerPrefilterAgreesWithRegexp(t *testing.T) {
	ctx := context.Background()
	h := openTriggerHost(t)
	patterns := []string{
		`(?i)kelvin`, `(?i)stop`, `ſtop`, `(?i)straße`, `foo|bar|bazz`, `\bsql\.Open\(`, `ab+c`,
		`x{2,}y`, `(?i)drop\s+table`, `[0-9]+ms`, `(?:alpha|be)ta`, `Ünïcode`, `(?i)ÜNÏCODE`, `q(ui)?ck`,
		`(?i)KeLvIn\d`, `.`, `^\s*//\s*TODO`, `end$`,
	}
	ids := map[string]string{}
	for i, p := range patterns {
		ids[triggerCard(t, h, fmt.Sprintf("card %d", i), "qi", domain.Scope{}, domain.Trigger{Patterns: []string{p}})] = p
	}
	set, err := h.Pack().CompileTriggers(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	frags := []string{"kelvin", "KELVIN", "\u212aelvin", "stop", "STOP", "ſtop", "ſTOP", "STRASSE", "straße", "STRAßE",
		"foo", "bar", "bazz", "sql.Open(", "xsql.Open(", "abbbc", "ac", "xxy", "xy", "DROP  TABLE", "drop\ttable",
		"12ms", "ms", "alphata", "beta", "Ünïcode", "üNÏCODE", "ÜNÏCODE", "quck", "quick", "kelvin7", "KELVIN7",
		"  // TODO", "the end", " ", "é", "\t"}
	r := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	for range 400 {
		for n := r.IntN(6); n >= 0; n-- {
			b.WriteString(frags[r.IntN(len(frags))])
		}
		b.WriteByte('\n')
	}
	text := b.String()
	got, _ := set.Match(text)
	var want []string
	for i, line := range strings.Split(text, "\n") {
		var hits []string
		for id, p := range ids {
			if loc := regexp.MustCompile(p).FindStringIndex(line); loc != nil {
				hits = append(hits, fmt.Sprintf("%05d:%05d:%s", i+1, loc[0]+1, id))
			}
		}
		slices.Sort(hits)
		want = append(want, hits...)
	}
	var gotS []string
	for _, m := range got {
		gotS = append(gotS, fmt.Sprintf("%05d:%05d:%s", m.Line, m.Col, m.Card.ID))
	}
	if !slices.Equal(gotS, want) {
		t.Fatalf("prefiltered matches differ from plain regexp: got %d, want %d\nfirst got  %q\nfirst want %q",
			len(gotS), len(want), gotS[:min(5, len(gotS))], want[:min(5, len(want))])
	}

	// A line cache gives the same answers, also after edits that move,
	// change and duplicate lines.
	var cache pack.MatchCache
	for i, edit := range []func(string) string{
		func(s string) string { return s },
		func(s string) string { return "new first line sql.Open(\n" + s },
		func(s string) string { return strings.Replace(s, "kelvin", "KELVIN", 3) },
		func(s string) string { return s + s },
	} {
		text = edit(text)
		plain, _ := set.Match(text)
		cached, _ := set.MatchCached(text, &cache)
		if fmt.Sprint(plain) != fmt.Sprint(cached) {
			t.Fatalf("edit %d: cached matches differ from uncached (%d vs %d)", i, len(cached), len(plain))
		}
	}
}

func TestCompileTriggersReportsInvalid(t *testing.T) {
	// distill refuses a bad pattern, so the set can only meet one that an
	// older palace or another tool stored; the set's answer for a good one
	// must not depend on it.
	ctx := context.Background()
	h := openTriggerHost(t)
	ev, _ := h.Intake().Record(ctx, intake.RecordRequest{Anchor: "global", Content: "seen"})
	_, err := h.Distill(ctx, intake.DistillRequest{Anchor: "global", Statement: "bad", Tier: "qi", Supporting: []string{ev.ID},
		Trigger: domain.Trigger{Patterns: []string{"a("}}})
	if err == nil || !strings.Contains(err.Error(), `trigger pattern "a(" is not a valid regular expression`) {
		t.Fatalf("distill with a bad pattern: err = %v", err)
	}
}

func TestChangeProbeSeesOtherHosts(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	a, err := host.Open(ctx, host.Options{Home: home, Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := host.Open(ctx, host.Options{Home: home, Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	p, err := a.NewChangeProbe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	v1, err := p.Version(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v2, _ := p.Version(ctx); v2 != v1 {
		t.Fatalf("version moved without a commit: %d → %d", v1, v2)
	}
	if _, err := b.Intake().Record(ctx, intake.RecordRequest{Anchor: "global", Content: "from another host"}); err != nil {
		t.Fatal(err)
	}
	if v3, _ := p.Version(ctx); v3 == v1 {
		t.Fatalf("version did not move after another host committed: %d", v3)
	}
}
