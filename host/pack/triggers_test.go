package pack_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/internal/jobtest"
	"github.com/palacehq/palace/host/pack"
)

// triggerCard writes an authoritative card with the given trigger at the
// global anchor (the fixture is outside git).
func triggerCard(t testing.TB, fx *fixture, statement string, tier domain.Tier, scope domain.Scope, trig domain.Trigger) string {
	t.Helper()
	return fx.card(t, spec{statement: statement, tier: tier, scope: scope, trigger: trig})
}

func TestHintsMatchesAndScope(t *testing.T) {
	ctx := context.Background()
	fx := newFixture(t, jobtest.Options{})
	sqlID := triggerCard(t, fx, "Open SQLite in WAL mode", domain.TierQi, domain.Scope{}, domain.Trigger{Patterns: []string{`sql\.Open\(`}})
	pyID := triggerCard(t, fx, "Use pathlib", domain.TierShu, domain.Scope{Languages: []string{"python"}}, domain.Trigger{Patterns: []string{`os\.path`}})
	dropID := triggerCard(t, fx, "Never drop tables by hand", domain.TierDaoRen, domain.Scope{}, domain.Trigger{Patterns: []string{`(?i)drop\s+table`}, Intents: []string{"migrate"}})

	text := "package db\n\nfunc open() {\n\tdb, _ := sql.Open(\"sqlite\", p) // os.path\n\t// DROP  TABLE x; sql.Open(again)\n}\n"
	got, err := fx.pl.Hints(ctx, nil, pack.HintsRequest{File: "db/open.go", Text: text})
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
	py, err := fx.pl.Hints(ctx, nil, pack.HintsRequest{File: "tool.py", Text: "import os.path\n"})
	if err != nil {
		t.Fatal(err)
	}
	if len(py.Matches) != 1 || py.Matches[0].Card.ID != pyID || py.Matches[0].Line != 1 || py.Matches[0].Col != 8 {
		t.Errorf("python file matches = %+v, want %s at 1:8", py.Matches, pyID)
	}

	set, err := fx.pl.CompileTriggers(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tagged := set.Tagged("MIGRATE"); len(tagged) != 1 || tagged[0].ID != dropID {
		t.Errorf("Tagged(MIGRATE) = %+v, want %s", tagged, dropID)
	}
}

func TestHintsSkipsCandidatesAndLongLines(t *testing.T) {
	ctx := context.Background()
	fx := newFixture(t, jobtest.Options{})
	fx.Seed(t, jobtest.Card{Statement: "candidate only", Tier: domain.TierQi, Trigger: domain.Trigger{Patterns: []string{"needle"}}})
	id := triggerCard(t, fx, "authoritative", domain.TierQi, domain.Scope{}, domain.Trigger{Patterns: []string{"needle"}})
	long := strings.Repeat("x", pack.MaxTriggerLineBytes) + "needle"
	got, err := fx.pl.Hints(ctx, nil, pack.HintsRequest{File: "a.txt", Text: long + "\r\nneedle\r\n"})
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
	fx := newFixture(t, jobtest.Options{})
	patterns := []string{
		`(?i)kelvin`, `(?i)stop`, `ſtop`, `(?i)straße`, `foo|bar|bazz`, `\bsql\.Open\(`, `ab+c`,
		`x{2,}y`, `(?i)drop\s+table`, `[0-9]+ms`, `(?:alpha|be)ta`, `Ünïcode`, `(?i)ÜNÏCODE`, `q(ui)?ck`,
		`(?i)KeLvIn\d`, `.`, `^\s*//\s*TODO`, `end$`,
	}
	ids := map[string]string{}
	for i, p := range patterns {
		ids[triggerCard(t, fx, fmt.Sprintf("card %d", i), domain.TierQi, domain.Scope{}, domain.Trigger{Patterns: []string{p}})] = p
	}
	set, err := fx.pl.CompileTriggers(ctx, nil)
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
