package intake

import (
	"fmt"
	"strings"
	"sync"

	"github.com/palacehq/palace/internal/lazyregexp"
)

// Memory must not feed on its own echo: a pack or brief recorded back as
// evidence would let a card support itself. Record refuses such content on
// every surface, recognised by shape (a pack's heading with its preamble or
// an item line, or any rendered item line, "— `kc_…` · worktree · cites …"),
// by the keys only a pack's or brief's JSON has, or exactly, by the item
// lines this Host rendered last, whatever the renderer's format becomes.
// Quoting and re-indentation do not hide an echo (see fold).

var (
	echoHeading = lazyregexp.New(`(?m)^[\s>]*#{1,6}[ \t]*palace (context|brief)\b`)
	// echoPreamble is the sentence under a pack's heading, as it is and as
	// earlier versions wrote it.
	echoPreamble = lazyregexp.New(`(Governed memory for .{1,400}?Each card names its id and the evidence it cites)|(Memory of (repository|global memory).{1,400}?; fetch a card with)`)
	// echoItem matches a rendered card line: inline ("— `kc_…` · repo"),
	// reference ("`kc_…` shu · field F · repo"), and the reference forms of
	// earlier versions ("… — `palace card show kc_…`").
	echoItem = lazyregexp.New("(—\\s*`kc_[0-9A-Za-z_]+`\\s*·\\s*(worktree|repo|global))|(`kc_[0-9A-Za-z_]+`\\s+(dao_tian|dao_ren|shu|qi)\\b[^\\n·]*·\\s*field\\s)|(—\\s*`palace card show kc_[0-9A-Za-z_]+`)|(—\\s*palace_cards get\\s*`kc_[0-9A-Za-z_]+`)")
)

// echoJSON are key sets that only a pack or a brief has, for one pasted as
// the JSON of a tool's structured result.
var echoJSON = []struct {
	what string
	keys []string
}{
	{"a context pack", []string{`"rendered"`, `"selection"`, `"memory_exists"`}},
	{"a brief", []string{`"key_facts"`, `"next_actions"`, `"memory_exists"`}},
}

// rememberedRenderings bounds how many renderings the exact check keeps.
const rememberedRenderings = 32

// EchoGuard remembers the renderings of one Host so Record can refuse them.
type EchoGuard struct {
	mu sync.Mutex
	// lines holds the folded item lines of the last renderings, oldest first.
	lines [][]string
}

// Remember keeps the item lines of a rendering this server returned.
func (g *EchoGuard) Remember(rendered string) {
	var keep []string
	for _, l := range strings.Split(rendered, "\n") {
		if f := fold(l); len(f) >= 24 && (strings.Contains(f, "kc_") || strings.Contains(f, "ev_")) {
			keep = append(keep, f)
		}
	}
	if len(keep) == 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.lines = append(g.lines, keep)
	if len(g.lines) > rememberedRenderings {
		g.lines = g.lines[len(g.lines)-rememberedRenderings:]
	}
}

// check returns a KindInvalid error naming content when it echoes a
// rendering.
func (g *EchoGuard) check(content string) error {
	// Every form below holds one of these (remembered lines hold kc_ or
	// ev_); most evidence has none, so a batch import pays a few scans a row.
	if !strings.Contains(content, "kc_") && !strings.Contains(content, "ev_") &&
		!strings.Contains(content, "palace") && !strings.Contains(content, `"memory_exists"`) {
		return nil
	}
	why := ""
	switch {
	case echoHeading.MatchString(content) && (echoPreamble.MatchString(fold(content)) || echoItem.MatchString(content)):
		why = "it contains a context pack palace rendered (its heading and cards)"
	case echoItem.MatchString(content):
		why = "it contains a card line of a context pack palace rendered: " + quoteLine(echoItem.FindString(content))
	default:
		why = jsonEcho(content)
		if why == "" {
			why = g.exact(content)
		}
	}
	if why == "" {
		return nil
	}
	return &Error{Kind: KindInvalid, Field: "content", Msg: fmt.Sprintf(
		"content is refused: %s, and memory must not feed on its own echo; record what you observed or were told in your own words, and name the cards it concerns by id (in source_ref or tags)", why)}
}

func jsonEcho(content string) string {
	for _, j := range echoJSON {
		all := true
		for _, k := range j.keys {
			all = all && strings.Contains(content, k)
		}
		if all {
			return "it contains " + j.what + " palace returned, as JSON"
		}
	}
	return ""
}

func (g *EchoGuard) exact(content string) string {
	folded := fold(content)
	g.mu.Lock()
	defer g.mu.Unlock()
	for i := len(g.lines) - 1; i >= 0; i-- {
		for _, l := range g.lines[i] {
			if strings.Contains(folded, l) {
				return "it repeats text this palace session rendered: " + quoteLine(l)
			}
		}
	}
	return ""
}

// fold removes quote and bullet markers at line starts and folds
// whitespace runs, so a quoted or re-indented echo compares equal to the
// original.
func fold(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimLeft(l, " \t>-*")
	}
	return strings.Join(strings.Fields(strings.Join(lines, "\n")), " ")
}

func quoteLine(s string) string {
	s = fold(s)
	if r := []rune(s); len(r) > 80 {
		s = string(r[:79]) + "…"
	}
	return fmt.Sprintf("%q", s)
}
