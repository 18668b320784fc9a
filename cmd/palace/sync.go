package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/palacehq/palace/cardfile"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/teamsync"
)

func newSyncCmd(g *globals) *cobra.Command {
	var req teamsync.SyncRequest
	var resolve []string
	cmd := &cobra.Command{
		Use:   "sync",
		Short: "Share this repository's cards through git: export changed cards, import card files that arrived",
		Long: `Sync this checkout's card files (.palace/cards/<id>.md, one per card, with the
evidence it cites) with the palace:

  - export: this repository's authoritative cards (and candidates shared with
    --share) that changed in the palace are written as files, to commit and
    push like any other change;
  - import: committed files that changed (a pull, a checkout, a merge)
    become cards of this repository with the same ids and citations. Only
    committed files are read, never the working tree: an untracked or
    modified file is a finding (PC018) until it is committed;
  - the gate decides what a file may change: a claim of promoted or
    canonical, an edit of an authoritative card, a demotion or retirement.
    The gate learns the commit that last changed the file and whether the
    upstream default branch (origin's HEAD, else origin/main or
    origin/master) holds it; the default policy accepts a file's claim only
    from there, on the evidence the file carries. A refused claim keeps this
    palace's version of the card (a new card is a candidate) and is reported
    as held; palace doctor and palace audit say why;
  - a file's claims are claims: evidence dates are capped at the commit's
    date, a human author counts only from the reviewed history, redacted
    evidence is left out, evidence of another anchor is never linked;
  - conflicts: a card changed both in its committed file and in this palace
    since the last sync is reported with a diff and left alone; --resolve
    ID=file or ID=palace picks one.

Worktree cards never leave the machine and global cards stay personal: only
this repository's cards are written. A file with problems (palace cards
check shows them) is skipped; the rest of the sync goes on.

--dry-run writes nothing and shows, per file, what the sync would do (new,
changed, unchanged, held, conflict, export, skipped), the status the file
claims, its commit and the gate's answer with its reasons.

Exit 0: synced (held cards are reported); 1: a conflict is left or a card
file was skipped; 2: bad flags; 3: agent mode (sync may make a card
authoritative, which only a human may).

'git config palace.autoExport true' in a checkout writes a card's file after
each lifecycle change made there (promote, demote, retire, publish, link).`,
		Example: `  palace sync                      # after git pull, and before git commit
  palace sync --share kc_01…        # write a candidate for the team to review
  palace sync --resolve kc_01…=file # take the file's version of a conflicted card`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for _, r := range resolve {
				id, side, ok := strings.Cut(r, "=")
				if !ok {
					return usageError{fmt.Sprintf("--resolve %q: give ID=file or ID=palace", r)}
				}
				if req.Resolve == nil {
					req.Resolve = map[string]string{}
				}
				req.Resolve[id] = side
			}
			return g.withHost(cmd, func(ctx context.Context, h *host.Host) error {
				rep, err := h.Sync(ctx, req)
				if err != nil && len(rep.Findings) == 0 {
					return err
				}
				if oerr := g.output(rep, func(w io.Writer) { printSync(w, rep) }); oerr != nil {
					return oerr
				}
				if err != nil {
					return err
				}
				if len(rep.Conflicts) > 0 {
					fmt.Fprintf(g.stderr, "palace sync: %s left: pick a side with --resolve ID=file or ID=palace\n", plural(len(rep.Conflicts), "conflict"))
				}
				n := skipped(rep)
				if n > 0 {
					fmt.Fprintf(g.stderr, "palace sync: %s skipped: fix them (palace cards check shows them) and sync again\n", plural(n, "card file"))
				}
				if len(rep.Conflicts) > 0 || n > 0 {
					return exitError{1}
				}
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&req.Share, "share", nil, "candidate card ids of this repository to write as files for review")
	f.StringSliceVar(&resolve, "resolve", nil, "settle a conflict: ID=file takes the file, ID=palace keeps this palace's card")
	f.BoolVar(&req.DryRun, "dry-run", false, "show per file what the sync would do and the gate's answer; write nothing")
	f.BoolVar(&req.Rewrite, "rewrite", false, "render every shared card's file again and write those whose bytes differ, removed ones included (files changed in the checkout are still imported)")
	return cmd
}

func printSync(w io.Writer, rep teamsync.SyncReport) {
	p := newPainter(w)
	for _, f := range rep.Findings {
		fmt.Fprintln(w, escapeControls(f.String()))
	}
	if rep.DryRun {
		for _, f := range rep.Files {
			line := fmt.Sprintf("%-9s %s", f.State, f.Path)
			if f.Claimed != "" {
				line += " (claims " + f.Claimed
				if f.Status != "" && f.Status != f.Claimed {
					line += ", would be " + f.Status
				}
				line += ")"
			}
			if f.Commit != "" {
				reviewed := "not on the upstream default branch"
				if f.Reviewed {
					reviewed = "on the upstream default branch"
				}
				line += fmt.Sprintf(" from %.12s, %s", f.Commit, reviewed)
			}
			fmt.Fprintln(w, escapeControls(line))
			if f.Gate != nil {
				verdict := "gate: allows"
				if !f.Gate.Allow {
					verdict = "gate: refuses"
				}
				fmt.Fprintf(w, "  %s\n", verdict)
				for _, r := range f.Gate.Reasons {
					fmt.Fprintf(w, "  - %s\n", escapeControls(r))
				}
			}
		}
	} else {
		for _, id := range rep.Exported {
			fmt.Fprintf(w, "exported %s\n", id)
		}
		for _, id := range rep.Imported {
			fmt.Fprintf(w, "imported %s\n", id)
		}
		for _, hc := range rep.Held {
			fmt.Fprintf(w, "%s:%d: held %s: the file claims %s, and the gate says no\n", hc.Path, hc.Line, hc.CardID, hc.Claimed)
			for _, r := range hc.Reasons {
				fmt.Fprintf(w, "  - %s\n", escapeControls(r))
			}
		}
	}
	for _, n := range rep.NearDuplicates {
		fmt.Fprintf(w, "imported %s nearly repeats a card at the repository anchor:\n", n.CardID)
		printNear(w, "  ", n.NearDuplicates)
	}
	for _, id := range rep.Removed {
		fmt.Fprintf(w, "%s: file gone from HEAD; kept in the palace, not written again until it changes here\n", id)
	}
	for _, c := range rep.Conflicts {
		fmt.Fprintf(w, "%s\n", p.paint("1;31", "conflict "+c.CardID+" ("+c.Path+"): changed in the committed file and in this palace"))
		fmt.Fprint(w, indentBlock(c.Diff))
	}
	format := "%s: %d exported, %d imported, %d held, %s, %d unchanged\n"
	if rep.DryRun {
		format = "%s (dry run, nothing written): would export %d, import %d, hold %d; %s, %d unchanged\n"
	}
	fmt.Fprintf(w, format, rep.Dir, len(rep.Exported), len(rep.Imported), len(rep.Held), plural(len(rep.Conflicts), "conflict"), rep.Unchanged)
	if rep.Pending > 0 {
		fmt.Fprintf(w, "%s written by palace and not committed yet: commit them to share them\n", plural(rep.Pending, "card file"))
	}
	if rep.WorktreeCards > 0 {
		fmt.Fprintf(w, "%s not shared (worktree cards never leave this machine): palace publish ID --to repo shares one\n", plural(rep.WorktreeCards, "worktree card"))
	}
}

// skipped counts the card files a sync left out for their errors.
func skipped(rep teamsync.SyncReport) int {
	files := map[string]bool{}
	for _, f := range rep.Findings {
		if f.Severity == cardfile.SeverityError {
			files[f.Path] = true
		}
	}
	return len(files)
}

func indentBlock(s string) string {
	if s == "" {
		return ""
	}
	var b strings.Builder
	for _, l := range strings.SplitAfter(strings.TrimSuffix(s, "\n"), "\n") {
		b.WriteString("  " + escapeControls(strings.TrimSuffix(l, "\n")) + "\n")
	}
	return b.String()
}

func newCardsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cards",
		Short: "Card files in git: check them (the pre-commit hook) and list the finding codes",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newCardsCheckCmd(g), newCardsCodesCmd(g))
	return cmd
}

func newCardsCheckCmd(g *globals) *cobra.Command {
	var req teamsync.CardsCheckRequest
	cmd := &cobra.Command{
		Use:   "check [FILE…]",
		Short: "Check card files: the pre-commit hook (exit 1 on any error finding)",
		Long: `Check card files (.palace/cards/<id>.md): the front matter's schema (unknown
keys, unknown tier/status/…, missing fields), ids (well-formed, matching the
file name, declared once), citations present with their evidence and hashes,
secrets (redacted), merge conflict markers, size, and whether the status a file
claims (promoted, canonical) is allowed by the repository's gate policy for
the evidence it carries. One finding per line:

  path:line:col: CODE message

Exit 0: no errors (warnings may be printed); 1: at least one error finding;
2: a FILE cannot be read or is not staged.

--staged checks the version of each card file in the index (what is being
committed). Without FILE: with --staged every staged card file, else every
file in this checkout's .palace/cards. The check opens no database and
creates no palace home. 'palace cards codes' lists the codes.`,
		Example: `  palace cards check --staged            # in .git/hooks/pre-commit
  palace cards check .palace/cards/kc_01….md --format json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			req.Paths = args
			opts, err := g.hostOptions()
			if err != nil {
				return err
			}
			rep, err := host.CheckCards(cmd.Context(), opts, req)
			if err != nil {
				return err
			}
			return g.verdict(rep, func(w io.Writer) {
				for _, f := range rep.Findings {
					fmt.Fprintln(w, escapeControls(f.String()))
				}
				if len(rep.Findings) > 0 {
					fmt.Fprintf(g.stderr, "palace cards check: %s, %s in %s\n", plural(rep.Errors, "error"), plural(rep.Warnings, "warning"), plural(len(rep.Checked), "file"))
				}
			}, rep.Errors == 0)
		},
	}
	cmd.Flags().BoolVar(&req.Staged, "staged", false, "check the staged version of each card file (what is being committed)")
	return cmd
}

func newCardsCodesCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "codes",
		Short: "List the finding codes of cards check",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			codes := cardfile.Codes()
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
