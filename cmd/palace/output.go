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

// cell is one table cell: its text and the color it is painted in.
type cell struct{ text, code string }

// table writes rows in columns two spaces apart. It measures the plain
// text, not the escape codes a painted cell carries, which is why it is not
// a tabwriter: tabwriter counts escape bytes as width and misaligns every
// column after a colored one. The last column is not padded.
func (p painter) table(w io.Writer, rows [][]cell) {
	var widths []int
	for _, r := range rows {
		for i, c := range r {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c.text))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		b.Reset()
		for i, c := range r {
			if c.code != "" {
				b.WriteString(p.paint(c.code, c.text))
			} else {
				b.WriteString(c.text)
			}
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c.text)+2))
			}
		}
		b.WriteByte('\n')
		io.WriteString(w, b.String())
	}
}

func (p painter) paint(code, s string) string {
	if !p.on {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

var (
	tierColors   = map[string]string{"dao_tian": "1;35", "dao_ren": "35", "shu": "36", "qi": "33"}
	statusColors = map[string]string{"candidate": "2", "promoted": "32", "canonical": "1;32", "demoted": "31", "retired": "2;31"}
)

// tier renders a tier in its color.
func (p painter) tier(t string) string { return p.paint(tierColors[t], t) }

func (p painter) status(s string) string { return p.paint(statusColors[s], s) }

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
