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
	"github.com/palacehq/palace/internal/trigger"
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

// cardRow writes an authoritative card whose triggers an intake would
// refuse: the door does not look at them, and the set must survive what
// an older palace or another tool stored.
func cardRow(t testing.TB, fx *fixture, statement string, trig domain.Trigger) string {
	t.Helper()
	return fx.card(t, spec{statement: statement, tier: domain.TierQi, trigger: trig})
}

// TestCompileTriggersSkipsWhatItCannotHold: a stored pattern that does not
// compile, and a card over the trigger limits, are listed as invalid and
// never match; an expired card's triggers are not compiled; the rest of
// the set answers as if they were not there, and a recompilation from the
// previous set answers the same.
func TestCompileTriggersSkipsWhatItCannotHold(t *testing.T) {
	ctx := context.Background()
	fx := newFixture(t, jobtest.Options{})
	good := triggerCard(t, fx, "Open SQLite in WAL mode", domain.TierQi, domain.Scope{}, domain.Trigger{Patterns: []string{`sql\.Open\(`}})
	bad := cardRow(t, fx, "a bad pattern from an older palace", domain.Trigger{Patterns: []string{"a(", `sql\.Open`}})
	many := make([]string, trigger.MaxPatterns+1)
	for i := range many {
		many[i] = fmt.Sprintf("needle%d", i)
	}
	over := cardRow(t, fx, "too many patterns", domain.Trigger{Patterns: many})
	old := spec{statement: "expired: open with the old driver", tier: domain.TierQi, trigger: domain.Trigger{Patterns: []string{`sql\.Open\(`}}, expiresAt: "2026-03-01T00:00:00.000Z"}
	expired := fx.card(t, old)

	set, err := fx.pl.CompileTriggers(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range set.Cards() {
		ids = append(ids, c.ID)
	}
	if !slices.Contains(ids, good) || !slices.Contains(ids, bad) || slices.Contains(ids, over) || slices.Contains(ids, expired) {
		t.Errorf("cards %v: want %s and %s, not the card over the limits %s nor the expired %s", ids, good, bad, over, expired)
	}
	if set.Len() != 2 {
		t.Errorf("%d patterns compiled, want 2 (the good card's, the bad card's good one)", set.Len())
	}
	inv := set.Invalid()
	if len(inv) != 2 || !slices.ContainsFunc(inv, func(i pack.InvalidTrigger) bool { return i.CardID == bad && i.Pattern == "a(" }) ||
		!slices.ContainsFunc(inv, func(i pack.InvalidTrigger) bool {
			return i.CardID == over && i.Pattern == "" && strings.Contains(i.Error, "skipped")
		}) {
		t.Errorf("invalid = %+v", inv)
	}
	text := "db := sql.Open(x)\nneedle1\n"
	h, err := fx.pl.Hints(ctx, set, pack.HintsRequest{File: "db.go", Text: text})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range h.Matches {
		got = append(got, fmt.Sprintf("%d:%s", m.Line, m.Card.ID))
	}
	if want := []string{"1:" + good, "1:" + bad}; !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) || len(h.Invalid) != 2 {
		t.Errorf("matches %v (invalid %d), want %v and the two invalid listed", got, len(h.Invalid), want)
	}
	again, err := fx.pl.CompileTriggers(ctx, set)
	if err != nil {
		t.Fatal(err)
	}
	m1, _ := set.Match(text)
	m2, _ := again.Match(text)
	if fmt.Sprint(m1) != fmt.Sprint(m2) || again.Len() != set.Len() {
		t.Errorf("recompiled from the previous set: %v, want %v", m2, m1)
	}
}
