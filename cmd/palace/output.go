package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"

	"github.com/palacehq/palace/domain"
	"golang.org/x/term"
)

// printJSON writes v as indented JSON with a trailing newline. HTML escaping
// is off so statements read as written.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// output prints v as JSON or calls text for the human form.
func (g *globals) output(v any, text func(w io.Writer)) error {
	if g.json() {
		return printJSON(g.stdout, v)
	}
	text(g.stdout)
	return nil
}

// nonNil makes a nil list an empty one, which JSON prints as [].
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
}

// isTTY reports whether w is a terminal.
func isTTY(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// painter colors text on terminals unless NO_COLOR is set (or TERM is
// dumb); CLICOLOR_FORCE=1 colors output that is not a terminal too.
type painter struct{ on bool }

func newPainter(w io.Writer) painter {
	if os.Getenv("NO_COLOR") != "" {
		return painter{}
	}
	if f := os.Getenv("CLICOLOR_FORCE"); f != "" && f != "0" {
		return painter{on: true}
	}
	return painter{on: isTTY(w) && os.Getenv("TERM") != "dumb"}
}

// paint colors s; s is escaped first (escapeControls), so a painted value
// can never carry escape codes of its own.
func (p painter) paint(code, s string) string {
	s = escapeControls(s)
	if !p.on {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

var (
	tierColors   = map[domain.Tier]string{domain.TierDaoTian: "1;35", domain.TierDaoRen: "35", domain.TierShu: "36", domain.TierQi: "33"}
	statusColors = map[domain.Status]string{domain.StatusCandidate: "2", domain.StatusPromoted: "32", domain.StatusCanonical: "1;32", domain.StatusDemoted: "31", domain.StatusRetired: "2;31"}
)

// tier renders a tier in its color.
func (p painter) tier(t domain.Tier) string { return p.paint(tierColors[t], string(t)) }

func (p painter) status(s domain.Status) string { return p.paint(statusColors[s], string(s)) }

func (p painter) verdict(allow bool) string {
	if allow {
		return p.paint("1;32", "ALLOWED")
	}
	return p.paint("1;31", "DENIED")
}

func (p painter) dim(s string) string { return p.paint("2", s) }

// escapeControls makes text read from the store, a mailbox or a repository
// safe to print on a terminal: every character that a terminal would act
// on instead of showing is written visibly as an escape. That is C0
// controls but newline and tab (ESC starts the sequences that retitle a
// window, clear the screen or hide text), DEL, C1 controls (U+0080–U+009F,
// 8-bit CSI among them), Unicode format characters (bidi overrides such as
// U+202E, zero-width spaces and joiners, the BOM) and line and paragraph
// separators. Bytes that are not UTF-8 are shown as \xNN. Text without
// such characters is returned as it is.
//
// Every text printer passes untrusted strings through it (directly, or
// through truncate, paint and printTable); JSON output is escaped by the
// encoder instead.
func escapeControls(s string) string {
	var b strings.Builder
	done := 0 // s[:done] is in b
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if needsEscape(r, size) {
			b.WriteString(s[done:i])
			if size == 1 { // an ASCII control, or a byte that is not UTF-8
				fmt.Fprintf(&b, "\\x%02x", s[i])
			} else {
				fmt.Fprintf(&b, "\\u%04x", r)
			}
			done = i + size
		}
		i += size
	}
	if done == 0 {
		return s
	}
	return b.String() + s[done:]
}

func needsEscape(r rune, size int) bool {
	switch {
	case r == utf8.RuneError && size == 1:
		return true
	case r == '\n' || r == '\t':
		return false
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r == '\u2028' || r == '\u2029':
		return true
	}
	return r > 0x9f && unicode.Is(unicode.Cf, r)
}

// truncate cuts s to n runes with an ellipsis, on one line, with control
// characters escaped.
func truncate(s string, n int) string {
	s = escapeControls(strings.Join(strings.Fields(s), " "))
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// plural counts n of word in English: 1 card, 2 cards, 3 batches.
func plural(n int, word string) string {
	switch {
	case n == 1:
		return fmt.Sprintf("%d %s", n, word)
	case strings.HasSuffix(word, "ch"), strings.HasSuffix(word, "sh"), strings.HasSuffix(word, "s"), strings.HasSuffix(word, "x"):
		return fmt.Sprintf("%d %ses", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
