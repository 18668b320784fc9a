package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

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

func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
}

// isTTY reports whether w is a terminal.
func isTTY(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// painter colors text on terminals unless NO_COLOR is set.
type painter struct{ on bool }

func newPainter(w io.Writer) painter {
	return painter{on: isTTY(w) && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"}
}

func (p painter) paint(code, s string) string {
	if !p.on {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// tier renders a tier with a fixed width and its color.
func (p painter) tier(t string) string {
	codes := map[string]string{"dao_tian": "1;35", "dao_ren": "35", "shu": "36", "qi": "33"}
	return p.paint(codes[t], t)
}

func (p painter) status(s string) string {
	codes := map[string]string{"candidate": "2", "promoted": "32", "canonical": "1;32", "demoted": "31", "retired": "2;31"}
	return p.paint(codes[s], s)
}

func (p painter) verdict(allow bool) string {
	if allow {
		return p.paint("1;32", "ALLOWED")
	}
	return p.paint("1;31", "DENIED")
}

func (p painter) dim(s string) string { return p.paint("2", s) }

// truncate cuts s to n runes with an ellipsis, on one line.
func truncate(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
