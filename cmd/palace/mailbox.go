package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/mail"
	"github.com/palacehq/palace/mailbox"
)

func newMailboxCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mailbox",
		Short: "Agents' field reports: file, distribute, sweep, list and check letters",
		Long: `Letters are agents' field reports, one JSON object per line. 'file' appends one
to the spool ($PALACE_HOME/field-reports.jsonl); 'distribute' files spool letters
into the box of the repository they name (<repo>/.palace/inbox.jsonl, which
travels with git) or, naming none, into the global box ($PALACE_HOME/inbox.jsonl);
'sweep' and 'list' read them back with their fates; 'check' is the pre-commit
hook. See docs/mailbox.md.

Mailbox commands never open the database.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newMailboxFileCmd(g), newMailboxDistributeCmd(g), newMailboxSweepCmd(g),
		newMailboxListCmd(g), newMailboxCheckCmd(g), newMailboxCodesCmd(g))
	return cmd
}

// withMail opens the mailbox face (no database) and runs fn.
func (g *globals) withMail(cmd *cobra.Command, fn func(context.Context, *mail.Mail) error) error {
	opts, err := g.hostOptions()
	if err != nil {
		return err
	}
	m, err := host.OpenMail(cmd.Context(), opts)
	if err != nil {
		return err
	}
	return fn(cmd.Context(), m)
}

// maxDraftBytes bounds a letter read from stdin: a line is at most
// mailbox.MaxLineBytes, and pretty-printed JSON a few times that.
const maxDraftBytes = 4 * mailbox.MaxLineBytes

func newMailboxFileCmd(g *globals) *cobra.Command {
	var l mailbox.Letter
	var external string
	cmd := &cobra.Command{
		Use:   "file [-]",
		Short: "File a letter into the spool (secret scan first; a refused letter is not written)",
		Long: `File one letter, from flags or as a JSON object on stdin ("-"; ts may be left
out). The letter is validated and scanned for secrets before it is appended to
the spool with one O_APPEND write. Exit 2: the letter is invalid (the message
names the field); exit 1: it carries a secret (shown redacted). Nothing is
written in either case.

--agent defaults to $PALACE_AGENT in agent mode, else the OS user. A --repo of
"." or "./…" is made absolute, so distribute can find the repository later.`,
		Example: `  palace mailbox file --class tool_error --what "go test hung on the token prompt" --repo . --tool bash
  echo '{"agent":"claude","class":"missing_doc","what":"no install step"}' | palace mailbox file -`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("external") && external == "true" && len(args) == 1 && g.followsFlag("--external", args[0]) {
				// --external JIRA-12: the optional value written apart, as
				// with every other flag.
				external, args = args[0], nil
			}
			stdin := len(args) == 1 && args[0] == "-"
			if len(args) == 1 && !stdin {
				return usageError{fmt.Sprintf("unexpected argument %q: give the letter with flags, or - to read JSON from stdin", args[0])}
			}
			if cmd.Flags().Changed("external") {
				l.External = mailbox.External{Set: external != "" && external != "false", Ref: external}
				if external == "true" || external == "false" {
					l.External.Ref = ""
				}
			}
			if stdin {
				if letterFlagSet(cmd) {
					return usageError{"give the letter either with flags or as JSON on stdin (-), not both"}
				}
				b, err := io.ReadAll(io.LimitReader(g.stdin, maxDraftBytes+1))
				if err != nil {
					return &host.Error{Kind: host.KindInvalid, Field: "stdin", Msg: "read letter from stdin", Err: err}
				}
				if len(b) > maxDraftBytes {
					return &host.Error{Kind: host.KindInvalid, Field: "stdin", Msg: fmt.Sprintf("letter on stdin is over %d bytes; a letter is a report, not an attachment", maxDraftBytes)}
				}
				if l, err = mailbox.ParseDraft(b); err != nil {
					return &host.Error{Kind: host.KindInvalid, Field: "stdin", Msg: "read letter from stdin", Err: err}
				}
			} else if !cmd.Flags().Changed("what") && !cmd.Flags().Changed("class") {
				return usageError{"give the letter with --class and --what (and more flags), or - to read JSON from stdin"}
			}
			return g.withMail(cmd, func(ctx context.Context, m *mail.Mail) error {
				filed, err := m.File(ctx, l)
				if err != nil {
					return err
				}
				if filed.Repaired > 0 {
					fmt.Fprintf(g.stderr, "palace: line %d of the spool had no final newline; it was kept as it is and this letter starts on the next line (palace mailbox check %s shows that line)\n",
						filed.Repaired, filed.Spool)
				}
				return g.output(filed, func(w io.Writer) {
					dest := "the global box"
					if !mailbox.NamesNoProject(filed.Letter.Repo) {
						dest = "the box of " + filed.Letter.Repo
					}
					fmt.Fprintf(w, "filed %s → %s\n", filed.ID, filed.Spool)
					fmt.Fprintf(w, "%s\n", newPainter(w).dim("palace mailbox distribute delivers it to "+dest))
				})
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&l.Agent, "agent", "", "who writes (default $PALACE_AGENT in agent mode, else the OS user)")
	f.StringVar(&l.Class, "class", "", "kind of report: tool_error, missing_doc, … (required)")
	f.StringVar(&l.What, "what", "", "what happened (required)")
	f.StringVar(&l.Repo, "repo", "", "the project: a path (. for this checkout) or a remote such as github.com/org/name; empty or all: no project (global box)")
	f.StringVar(&l.Tool, "tool", "", "the tool involved")
	f.StringVar(&l.Expected, "expected", "", "what was expected")
	f.StringVar(&l.Snippet, "snippet", "", "a short excerpt (output, command)")
	f.StringVar(&l.Kind, "kind", "", "triage or receipt close the letters answered; anything else is a plain reply")
	listFlag(f, &l.Answers, "answers", "ids of the letters this one answers")
	f.StringVar(&external, "external", "", "tracked outside palace: a reference (JIRA-12, an issue URL), or bare --external")
	f.Lookup("external").NoOptDefVal = "true"
	f.StringVar(&l.TS, "ts", "", "when, RFC3339 (default now)")
	return cmd
}

// letterFlagSet says whether a flag of file, each of which describes the
// letter, was given.
func letterFlagSet(cmd *cobra.Command) (set bool) {
	cmd.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) { set = set || f.Changed })
	return set
}

func newMailboxDistributeCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "distribute",
		Short: "File spool letters into the boxes of the repositories they name (idempotent)",
		Long: `Deliver every spool letter to its box: the repository it names (by path,
worktree or remote), or the global box when it names none (repo empty, only an
"(annotation)", or all, global, none, n/a, -, *). A letter whose repository is
not on this machine stays pending, never in the global box. A second run
appends nothing. The current checkout's box is registered first, so letters
naming its remote find it.

A box that is, or lies under, a symbolic link inside its repository (.palace
or .palace/inbox.jsonl a link) is refused: nothing is written there, its
letters stay pending, the link is named, and the exit code is 2. So is a
global box ($PALACE_HOME/inbox.jsonl) that is a link.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withMail(cmd, func(ctx context.Context, m *mail.Mail) error {
				d, err := m.Distribute(ctx)
				if err != nil {
					return err
				}
				if err := g.output(d, func(w io.Writer) { printDistribution(w, d) }); err != nil {
					return err
				}
				for _, r := range d.Refused {
					fmt.Fprintf(g.stderr, "palace: refused box %s: %s\n", r.Path, r.Reason)
				}
				if len(d.Refused) > 0 {
					return exitError{2} // a link or a non-file where a box goes: bad input
				}
				return nil
			})
		},
	}
}

func newMailboxSweepCmd(g *globals) *cobra.Command {
	var open bool
	cmd := &cobra.Command{
		Use:   "sweep",
		Short: "Read the spool and every known box: each letter once, with its fate and where it was seen",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withMail(cmd, func(ctx context.Context, m *mail.Mail) error {
				res, err := m.Sweep(ctx)
				if err != nil {
					return err
				}
				if open {
					res = openOnly(res)
				}
				return g.output(res, func(w io.Writer) { printLetters(w, g.stderr, m.Mailbox(), res, true) })
			})
		},
	}
	cmd.Flags().BoolVar(&open, "open", false, "only open letters (wet_ink, in_flight); counts still cover all")
	return cmd
}

func newMailboxListCmd(g *globals) *cobra.Command {
	var opts mailbox.ListOptions
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List letters with their fates and counts",
		Long: `List letters with their fates (wet_ink, in_flight, fired_clay, external) and
counts. Without --box: the spool and every known box, as sweep reads them. With
--box: that one file, fates derived from the replies inside it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withMail(cmd, func(ctx context.Context, m *mail.Mail) error {
				res, err := m.List(ctx, opts)
				if err != nil {
					return err
				}
				return g.output(res, func(w io.Writer) { printLetters(w, g.stderr, m.Mailbox(), res, false) })
			})
		},
	}
	cmd.Flags().StringVar(&opts.Box, "box", "", "list one box file (default: the spool and every known box)")
	cmd.Flags().BoolVar(&opts.Open, "open", false, "only open letters (wet_ink, in_flight); counts still cover all")
	return cmd
}

func newMailboxCheckCmd(g *globals) *cobra.Command {
	var req mail.CheckRequest
	cmd := &cobra.Command{
		Use:   "check [FILE…]",
		Short: "Check boxes: the pre-commit hook (exit 1 on any error finding)",
		Long: `Check mailbox boxes for every problem a box can have — invalid JSON, missing
fields, secrets (redacted), conflict markers, duplicate ids, invalid UTF-8,
over-long lines, project letters in the global box, unknown answers (warning) —
and the team's palace.mailbox deny rules. One finding per line:

  path:line:col: CODE message

Columns count bytes. Exit 0: no errors (warnings may be printed); 1: at least
one error finding; 2: a FILE cannot be read or is not staged.

--staged checks the version of each box in the index (what is being committed)
against HEAD: boxes are append-only, so a changed, moved or deleted committed
line is an error (PM006). Without FILE: with --staged every staged box, else
this checkout's box and the global box. FILE paths are relative to --cwd.
'palace mailbox codes' lists the codes.`,
		Example: `  palace mailbox check --staged            # in .git/hooks/pre-commit
  palace mailbox check .palace/inbox.jsonl --format json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			req.Paths = args
			tuneGCForCheck()
			return g.withMail(cmd, func(ctx context.Context, m *mail.Mail) error {
				rep, err := m.Check(ctx, req)
				if err != nil {
					return err
				}
				return g.verdict(rep, func(w io.Writer) { printFindings(w, g.stderr, rep) }, rep.Errors == 0)
			})
		},
	}
	cmd.Flags().BoolVar(&req.Staged, "staged", false, "check the staged version of each box against HEAD (append-only history)")
	return cmd
}

func newMailboxCodesCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "codes",
		Short: "List the finding codes of mailbox check",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			codes := mailbox.Codes()
			return g.output(map[string]any{"codes": codes}, func(w io.Writer) {
				rows := make([][]string, len(codes))
				for i, c := range codes {
					rows[i] = []string{c.Code, string(c.Severity), c.Summary}
				}
				printTable(w, []string{"CODE", "SEVERITY", "MEANING"}, rows, nil)
			})
		},
	}
}

// checkMemoryLimit is where the garbage collector resumes during a check.
const checkMemoryLimit = 512 << 20

// tuneGCForCheck turns the collector off until the heap reaches
// checkMemoryLimit, unless GOGC or GOMEMLIMIT say otherwise. A check is a
// short process whose heap is mostly live (the box, one parsed letter per
// line): collecting at every doubling frees little and costs a large share
// of the run (docs/rationale.md). Past the limit — a huge box, or a team policy's garbage — it collects as
// usual.
func tuneGCForCheck() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(checkMemoryLimit)
	debug.SetGCPercent(-1)
}

// printFindings prints one `path:line:col: CODE message` per finding on
// stdout (editors and CI parse it) and a summary on stderr.
func printFindings(w, stderr io.Writer, rep mail.CheckReport) {
	p := newPainter(w)
	for _, f := range rep.Findings {
		s := escapeControls(f.String())
		if p.on {
			color := "1;31"
			if f.Severity == mailbox.SeverityWarning {
				color = "33"
			}
			// Only the code is painted: the line stays greppable.
			loc := fmt.Sprintf("%s:%d:%d: ", f.Path, f.Line, f.Col)
			s = loc + p.paint(color, f.Code) + strings.TrimPrefix(s, loc+f.Code)
		}
		fmt.Fprintln(w, s)
	}
	switch {
	case len(rep.Checked) == 0 && !rep.Staged:
		fmt.Fprintln(stderr, "palace: no box to check (this checkout has no .palace/inbox.jsonl and there is no global box)")
	case len(rep.Findings) > 0:
		fmt.Fprintf(stderr, "palace mailbox check: %s, %s in %s\n",
			plural(rep.Errors, "error"), plural(rep.Warnings, "warning"), plural(len(rep.Checked), "box"))
	}
}

// printTable prints rows under a header in columns two spaces apart, each
// cell escaped (in place). paint, when set, colors a row's cell after it is
// padded, so escape codes never upset the alignment (text/tabwriter would
// count them as width).
func printTable(w io.Writer, header []string, rows [][]string, paint func(col int, cell string) string) {
	rows = append([][]string{header}, rows...)
	width := make([]int, len(header))
	for _, r := range rows {
		for i, c := range r {
			r[i] = escapeControls(c)
			width[i] = max(width[i], utf8.RuneCountInString(r[i]))
		}
	}
	for n, r := range rows {
		var b strings.Builder
		for i, c := range r {
			if i < len(r)-1 {
				c += strings.Repeat(" ", width[i]-utf8.RuneCountInString(c)+2)
			}
			if n > 0 && paint != nil {
				c = paint(i, c)
			}
			b.WriteString(c)
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
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
		fmt.Fprintf(stderr, "palace: %s skipped; palace mailbox check %s shows why\n",
			pluralVerb(len(res.Invalid), "line is not a letter and was", "lines are not letters and were"), strings.Join(slices.Sorted(maps.Keys(paths)), " "))
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
