package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/palacehq/palace/cardfile"
	"github.com/palacehq/palace/host"
)

func init() { extraCommands = append(extraCommands, newSyncCmd, newCardsCmd) }

func newSyncCmd(g *globals) *cobra.Command {
	var req host.SyncRequest
	var resolve []string
	cmd := &cobra.Command{
		Use:   "sync",
		Short: "Share this repository's cards through git: export changed cards, import card files that arrived",
		Long: `Sync this checkout's card files (.palace/cards/<id>.md, one per card, with the
evidence it cites) with the palace:

  - export: this repository's authoritative cards (and candidates shared with
    --share) that changed in the palace are written as files, to commit and
    push like any other change;
  - import: files that arrived through git (pull, checkout, merge) become
    cards of this repository with the same ids and citations. A file that
    claims promoted or canonical is checked against the gate policy; if the
    gate refuses, the card is imported as a candidate and reported as held
    (palace doctor and palace audit say why);
  - conflicts: a card changed both in its file and in this palace since the
    last sync is reported with both versions and left alone; --resolve
    ID=file or ID=palace picks one.

Worktree cards never leave the machine and global cards stay personal: only
this repository's cards are written. A file with problems (palace cards
check shows them) stops the sync before anything is written.

Exit 0: synced (held cards are reported); 1: a conflict is left; 2: a card
file has problems, or bad flags; 3: agent mode (sync may make a card
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
					fmt.Fprintf(g.stderr, "palace sync: %d conflict(s) left: pick a side with --resolve ID=file or ID=palace\n", len(rep.Conflicts))
					return exitError{1}
				}
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&req.Share, "share", nil, "candidate card ids of this repository to write as files for review")
	f.StringSliceVar(&resolve, "resolve", nil, "settle a conflict: ID=file takes the file, ID=palace keeps this palace's card")
	f.BoolVar(&req.DryRun, "dry-run", false, "say what would be exported and imported; write nothing")
	f.BoolVar(&req.Rewrite, "rewrite", false, "render every shared card's file again and write those whose bytes differ, removed ones included (files changed in the checkout are still imported)")
	return cmd
}

func printSync(w io.Writer, rep host.SyncReport) {
	p := newPainter(w)
	for _, f := range rep.Findings {
		fmt.Fprintln(w, escapeControls(f.String()))
	}
	verb := ""
	if rep.DryRun {
		verb = "would be "
	}
	for _, id := range rep.Exported {
		fmt.Fprintf(w, "%sexported %s\n", verb, id)
	}
	for _, id := range rep.Imported {
		fmt.Fprintf(w, "%simported %s\n", verb, id)
	}
	for _, hc := range rep.Held {
		fmt.Fprintf(w, "%s:%d: held %s as a candidate: the file claims %s, and the gate says no\n", hc.Path, hc.Line, hc.CardID, hc.Claimed)
		for _, r := range hc.Reasons {
			fmt.Fprintf(w, "  - %s\n", escapeControls(r))
		}
	}
	for _, id := range rep.Removed {
		fmt.Fprintf(w, "%s: file gone from this checkout; kept in the palace, not written again until it changes here\n", id)
	}
	for _, c := range rep.Conflicts {
		fmt.Fprintf(w, "%s\n", p.paint("1;31", "conflict "+c.CardID+" ("+c.Path+"): changed in the file and in this palace"))
		fmt.Fprintf(w, "--- file %s\n%s", c.Path, indentBlock(c.File))
		fmt.Fprintf(w, "+++ palace %s\n%s", c.CardID, indentBlock(c.Palace))
	}
	if !cardfile.HasErrors(rep.Findings) {
		fmt.Fprintf(w, "%s: %d exported, %d imported, %d held, %d conflicts, %d unchanged\n", rep.Dir,
			len(rep.Exported), len(rep.Imported), len(rep.Held), len(rep.Conflicts), rep.Unchanged)
	}
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
	var req host.CardsCheckRequest
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
			if err := g.output(rep, func(w io.Writer) {
				for _, f := range rep.Findings {
					fmt.Fprintln(w, escapeControls(f.String()))
				}
				if len(rep.Findings) > 0 {
					fmt.Fprintf(g.stderr, "palace cards check: %d error(s), %d warning(s) in %d file(s)\n", rep.Errors, rep.Warnings, len(rep.Checked))
				}
			}); err != nil {
				return err
			}
			if rep.Errors > 0 {
				return exitError{1}
			}
			return nil
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
