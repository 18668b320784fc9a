//go:build unix

package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// manyPatterns is n distinct patterns, each compiling to about a thousand
// instructions: 40k of them hold gigabytes once compiled.
func manyPatterns(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("p%d[a-z]{999}", i)
	}
	return out
}

// TestDistillTriggerLimits: every way a card is distilled refuses
// triggers over the limits, naming the flag (the argument over MCP) and
// the limit, and writes nothing.
func TestDistillTriggerLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ev := e.record("seen once")
	base := []string{"distill", "--statement", "A card with triggers", "--tier", "qi", "--supporting", ev}
	flags := func(flag string, vals []string) []string {
		var out []string
		for _, v := range vals {
			out = append(out, flag, v)
		}
		return out
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"33 patterns", flags("--trigger-pattern", manyPatterns(33)), "--trigger-pattern: 33 trigger patterns, over the limit of 32 per card"},
		{"a pattern over 512 bytes", flags("--trigger-pattern", []string{strings.Repeat("a", 513)}), "--trigger-pattern: trigger pattern 1 is 513 bytes, over the limit of 512 bytes"},
		{"a pattern that compiles too big", flags("--trigger-pattern", []string{`(ab|cd){1000}`}), `--trigger-pattern: trigger pattern "(ab|cd){1000}" compiles to more than 1000 instructions`},
		{"programs too big together", flags("--trigger-pattern", []string{`a[a-z]{999}`, `b[a-z]{999}`, `c[a-z]{999}`, `d[a-z]{999}`, `e[a-z]{999}`}), "over the limit of 4000 per card"},
		{"33 intents", flags("--intent", manyPatterns(33)), "--intent: 33 intents, over the limit of 32 per card"},
	} {
		r := e.run(append(base, c.args...)...)
		wantCode(t, r, 2, c.want)
	}
	if n := len(e.cards("--anchor", "all", "--all-repos")); n != 0 {
		t.Fatalf("%d cards written", n)
	}
	// Over MCP the same limit names the argument.
	cs := e.mcpSession(t, nil)
	res := mcpCall(t, cs, "palace_distill", map[string]any{"statement": "A card with triggers", "tier": "qi",
		"supporting": []string{ev}, "trigger_patterns": manyPatterns(40)})
	text := res.Content[0].(*sdk.TextContent).Text
	if !res.IsError || !strings.Contains(text, "trigger_patterns: 40 trigger patterns, over the limit of 32 per card") {
		t.Fatalf("palace_distill: error %v %q", res.IsError, text)
	}
	// At the limits a card is written.
	e.ok(append(base, flags("--trigger-pattern", []string{`sql\.Open\(`, `[a-z]{999}`})...)...)
}

// TestCardFileTriggerLimits: a 1.3 MB card file with 40k trigger patterns
// is refused by cards check at the triggers line, fast and in bounded
// memory; committed, sync skips it with the same finding and imports
// nothing.
func TestCardFileTriggerLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rel := ".palace/cards/kc_01forgedforgedforgedforge.md"
	var b strings.Builder
	for _, p := range manyPatterns(40000) {
		fmt.Fprintf(&b, "    - %q\n", p+"  x")
	}
	file := strings.Replace(strings.Replace(forgedCard, "status: promoted", "status: candidate", 1),
		"  patterns: []\n", "  patterns:\n"+b.String(), 1)
	if len(file) < 1<<20 {
		t.Fatalf("the card file is %d bytes, want over 1 MB", len(file))
	}
	writeFile(t, e.dir, rel, file)
	r, rss := e.hostileRun(t, nil, "cards", "check")
	wantCode(t, r, 1)
	if want := rel + ":12:1: PC005 triggers.patterns: 40000 trigger patterns, over the limit of 32 per card"; !strings.Contains(r.stdout, want) {
		t.Errorf("cards check output lacks %q:\n%.2000s", want, r.stdout)
	}
	if rss > maxRSS {
		t.Errorf("cards check peaked at %d MiB, over %d MiB", rss>>20, maxRSS>>20)
	}
	e.git("add", ".palace")
	e.git("commit", "-q", "-m", "cards")
	e.git("update-ref", "refs/remotes/origin/main", "HEAD")
	r, rss = e.hostileRun(t, nil, "sync")
	wantCode(t, r, 1, "skipped")
	if want := rel + ":12:1: PC005 triggers.patterns"; !strings.Contains(r.stdout, want) {
		t.Errorf("sync output lacks %q:\n%.2000s", want, r.stdout)
	}
	if rss > maxRSS {
		t.Errorf("sync peaked at %d MiB, over %d MiB", rss>>20, maxRSS>>20)
	}
	if list := e.jsonOf("card", "list", "--anchor", "all", "--all-repos"); len(list["cards"].([]any)) != 0 {
		t.Errorf("sync imported the card: %v", list["cards"])
	}
}

// TestHintsSkipsAStoredCardOverTheLimits: a card stored with 40k patterns
// (by an older palace, or a tool writing the database) and one whose
// patterns compile too large are skipped with a note; palace hints still
// matches the other cards, in bounded memory.
func TestHintsSkipsAStoredCardOverTheLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	direct := func(statement, pattern string) string {
		return e.distill(statement, "qi", "--supporting", e.record("seen: "+statement), "--trigger-pattern", pattern,
			"--direct", "--status", "promoted")
	}
	good := direct("Open SQLite in WAL mode", `sql\.Open\(`)
	huge := direct("A card with forty thousand patterns", `placeholder`)
	big := direct("A card whose patterns compile too large", `placeholder2`)
	setTrigger := func(id string, patterns []string) {
		trig, err := json.Marshal(map[string]any{"patterns": patterns, "intents": []string{}, "tool_needs": []string{}})
		if err != nil {
			t.Fatal(err)
		}
		db, err := sql.Open("sqlite", filepath.Join(e.home, "palace.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.ExecContext(context.Background(), `UPDATE cards SET trigger = ? WHERE id = ?`, string(trig), id); err != nil {
			t.Fatal(err)
		}
	}
	setTrigger(huge, manyPatterns(40000))
	setTrigger(big, []string{`(ab|cd){1000}`})
	src := filepath.Join(e.dir, "open.go")
	if err := os.WriteFile(src, []byte("package db\n\nvar db, _ = sql.Open(\"sqlite\", \"x\")\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, rss := e.hostileRun(t, nil, "hints", src)
	wantCode(t, r, 0,
		"card "+huge+": its triggers are skipped: 40000 trigger patterns, over the limit of 32 per card",
		"card "+big+`: trigger pattern "(ab|cd){1000}" compiles to more than 1000 instructions`)
	if !strings.Contains(r.stdout, ":3:") || !strings.Contains(r.stdout, good) {
		t.Errorf("hints lost the good card's match:\n%s", r.stdout)
	}
	if rss > maxRSS {
		t.Errorf("palace hints peaked at %d MiB, over %d MiB", rss>>20, maxRSS>>20)
	}
}
