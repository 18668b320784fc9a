package main

import (
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/palacehq/palace/host/mail"
	"github.com/palacehq/palace/mailbox"
)

// printTable prints rows under a header in columns two spaces apart. paint,
// when set, colors a cell after it is padded, so escape codes never upset
// the alignment (text/tabwriter would count them as width).
func printTable(w io.Writer, header []string, rows [][]string, paint func(col int, cell string) string) {
	width := make([]int, len(header))
	safe := make([][]string, len(rows))
	for i, r := range rows {
		safe[i] = make([]string, len(r))
		for j, c := range r {
			safe[i][j] = escapeControls(c)
		}
	}
	rows = safe
	for _, r := range append([][]string{header}, rows...) {
		for i, c := range r {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	line := func(r []string, painted bool) {
		var b strings.Builder
		for i, c := range r {
			cell := c
			if i < len(r)-1 {
				cell += strings.Repeat(" ", width[i]-utf8.RuneCountInString(c)+2)
			}
			if painted && paint != nil {
				cell = paint(i, cell)
			}
			b.WriteString(cell)
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	line(header, false)
	for _, r := range rows {
		line(r, true)
	}
}

// fateColors make fates readable at a glance: open letters bright, closed
// ones dim.
var fateColors = map[mailbox.Fate]string{
	mailbox.FateWetInk:    "1;36",
	mailbox.FateInFlight:  "33",
	mailbox.FateFiredClay: "2;32",
	mailbox.FateExternal:  "35",
}

// printLetters prints a sweep or list: one row per letter, then the counts.
// seen adds the column naming where each letter was read.
func printLetters(w, stderr io.Writer, mb *mailbox.Mailbox, res mailbox.SweepResult, seen bool) {
	p := newPainter(w)
	header := []string{"ID", "FATE", "DATE", "AGENT", "CLASS", "WHAT"}
	if seen {
		header = []string{"ID", "FATE", "DATE", "AGENT", "CLASS", "SEEN IN", "WHAT"}
	}
	rows := make([][]string, 0, len(res.Letters))
	for _, e := range res.Letters {
		l := e.Letter
		date := l.TS
		if t := l.Time(); !t.IsZero() {
			date = t.UTC().Format("2006-01-02 15:04")
		}
		what := l.What
		if len(l.Answers) > 0 {
			what = "↳ " + strings.Join(l.Answers, ",") + ": " + what
		}
		row := []string{e.ID, string(e.Fate), date, truncate(l.Agent, 16), truncate(l.Class, 16)}
		if seen {
			row = append(row, seenIn(mb, e.Sources))
		}
		rows = append(rows, append(row, truncate(what, 64)))
	}
	if len(rows) > 0 {
		printTable(w, header, rows, func(col int, cell string) string {
			if col == 1 {
				return p.paint(fateColors[mailbox.Fate(strings.TrimSpace(cell))], cell)
			}
			if col == 0 {
				return p.dim(cell)
			}
			return cell
		})
		fmt.Fprintln(w)
	}
	c := res.Counts
	summary := fmt.Sprintf("%s · %d open (%d wet_ink, %d in_flight) · %d fired_clay · %d external",
		plural(c.Total, "letter"), c.Open, c.WetInk, c.InFlight, c.FiredClay, c.External)
	if len(res.Letters) != c.Total {
		summary += fmt.Sprintf(" · showing %d", len(res.Letters))
	}
	fmt.Fprintln(w, summary)
	for _, u := range res.Unreachable {
		fmt.Fprintf(w, "%s %s: %s\n", p.paint("33", "unreachable"), escapeControls(u.Path), escapeControls(u.Reason))
	}
	if len(res.Invalid) > 0 {
		paths := map[string]bool{}
		for _, ip := range res.Invalid {
			paths[ip.Path] = true
		}
		names := make([]string, 0, len(paths))
		for p := range paths {
			names = append(names, p)
		}
		sort.Strings(names)
		fmt.Fprintf(stderr, "palace: %s skipped; palace mailbox check %s shows why\n",
			pluralVerb(len(res.Invalid), "line is not a letter and was", "lines are not letters and were"), strings.Join(names, " "))
	}
}

// seenIn names the places a letter was read: spool, global, or the
// repository directory of a box.
func seenIn(mb *mailbox.Mailbox, srcs []mailbox.Source) string {
	var names []string
	seen := map[string]bool{}
	for _, s := range srcs {
		name := filepath.Base(filepath.Dir(filepath.Dir(s.Path)))
		switch s.Path {
		case mb.SpoolPath():
			name = "spool"
		case mb.GlobalBoxPath():
			name = "global"
		}
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	return strings.Join(names, ",")
}

// openOnly keeps the open letters of a sweep; the counts still cover all.
func openOnly(res mailbox.SweepResult) mailbox.SweepResult {
	kept := make([]mailbox.Entry, 0, len(res.Letters))
	for _, e := range res.Letters {
		if e.Fate.Open() {
			kept = append(kept, e)
		}
	}
	res.Letters = kept
	return res
}

func printDistribution(w io.Writer, d mail.Distribution) {
	p := newPainter(w)
	fmt.Fprintf(w, "delivered %s · %d already in their box · %d pending\n", plural(d.Delivered, "letter"), d.AlreadyPresent, len(d.Pending))
	if len(d.Boxes) > 0 {
		rows := make([][]string, len(d.Boxes))
		for i, b := range d.Boxes {
			path := b.Path
			if b.Global {
				path += " (global)"
			}
			rows[i] = []string{path, fmt.Sprint(b.Delivered), fmt.Sprint(b.AlreadyPresent)}
		}
		fmt.Fprintln(w)
		printTable(w, []string{"BOX", "NEW", "ALREADY"}, rows, nil)
	}
	if len(d.Pending) > 0 {
		fmt.Fprintf(w, "\n%s (they stay in the spool until their repository is on this machine):\n", p.paint("33", "pending"))
		rows := make([][]string, len(d.Pending))
		for i, pl := range d.Pending {
			rows[i] = []string{pl.ID, fmt.Sprintf("spool:%d", pl.Line), truncate(pl.Repo, 40), pl.Reason}
		}
		printTable(w, []string{"ID", "LINE", "REPO", "REASON"}, rows, nil)
	}
	if len(d.Invalid) > 0 {
		fmt.Fprintf(w, "\n%s (never delivered):\n", p.paint("31", "not deliverable"))
		for _, ip := range d.Invalid {
			fmt.Fprintf(w, "%s:%d: %s %s\n", escapeControls(ip.Path), ip.Line, ip.Code, escapeControls(ip.Message))
		}
	}
}

func pluralVerb(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
