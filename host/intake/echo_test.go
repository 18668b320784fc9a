package intake_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/palacehq/palace/host/intake"
	"github.com/palacehq/palace/host/internal/jobtest"
	"github.com/palacehq/palace/internal/hosterr"
)

// TestRecordRefusesEchoes: text palace rendered is refused as evidence by
// its shape (a pack's heading with its preamble or a card line, a card
// line alone, quoted or not), by the keys of a pack's or a brief's JSON,
// and exactly for what this session rendered; an agent's own words naming
// a card are evidence.
func TestRecordRefusesEchoes(t *testing.T) {
	ctx := context.Background()
	f := jobtest.New(t, jobtest.Options{Git: true})
	echo := &intake.EchoGuard{}
	in := intake.New(intake.Config{Env: f.Env, Gate: f.Keeper(), Echo: echo, EnsureAnchor: f.EnsureAnchor, Door: f.Door()})
	item := "- Open SQLite in WAL mode — `kc_01jz8w0m6xq2r9` · repo · cites ev_01a, ev_01b"
	pack := "# palace context\n\nGoverned memory for widgets (repo). Each card names its id and the evidence it cites.\n\n" + item + "\n"
	// A rendering in a form no pattern knows, remembered by this session.
	custom := "RULE 7 :: keep the store on WAL [kc_01custom0rendering] (ev_01custom)"
	echo.Remember("intro\n" + custom + "\nshort kc_1\n")
	for name, content := range map[string]string{
		"whole pack":     pack,
		"quoted pack":    "> " + strings.ReplaceAll(pack, "\n", "\n> "),
		"brief heading":  "## palace brief\n" + item,
		"card line":      "the agent was told: " + item,
		"reference line": "`kc_01jz8w0m6xq2r9` shu · field storage · repo",
		"older form":     "Open SQLite in WAL mode — `palace card show kc_01jz8w0m6xq2r9`",
		"pack JSON":      `{"rendered": "…", "selection": [], "memory_exists": true}`,
		"brief JSON":     `{"key_facts": [], "next_actions": [], "memory_exists": false}`,
		"remembered":     "  >  RULE 7 ::   keep the store on WAL\t[kc_01custom0rendering] (ev_01custom) and more",
	} {
		_, err := in.Record(ctx, intake.RecordRequest{Content: content})
		wantKind(t, name, err, hosterr.KindInvalid, "own echo")
	}
	if n := evidenceCount(t, f); n != 0 {
		t.Fatalf("echoes stored %d rows", n)
	}
	for _, own := range []string{
		"card kc_01jz8w0m6xq2r9 held: tests pass with WAL on",
		"the palace of Versailles has no SQLite",
		"# palace context is what the hook prints",
	} {
		if _, err := in.Record(ctx, intake.RecordRequest{Content: own}); err != nil {
			t.Errorf("own words %q refused: %v", own, err)
		}
	}
}

// TestEchoGuardKeepsTheLastRenderings: the exact check remembers a bounded
// number of renderings, the newest.
func TestEchoGuardKeepsTheLastRenderings(t *testing.T) {
	ctx := context.Background()
	f := jobtest.New(t, jobtest.Options{Git: true})
	echo := &intake.EchoGuard{}
	in := intake.New(intake.Config{Env: f.Env, Gate: f.Keeper(), Echo: echo, EnsureAnchor: f.EnsureAnchor, Door: f.Door()})
	line := func(i int) string { return fmt.Sprintf("rendering %03d names [kc_01rendered%03d] here", i, i) }
	for i := range 40 {
		echo.Remember(line(i))
	}
	_, err := in.Record(ctx, intake.RecordRequest{Content: "pasted: " + line(39)})
	wantKind(t, "the newest rendering", err, hosterr.KindInvalid, "repeats text this palace session rendered")
	if _, err := in.Record(ctx, intake.RecordRequest{Content: "pasted: " + line(0)}); err != nil {
		t.Errorf("a rendering past the bound is still refused: %v", err)
	}
}
