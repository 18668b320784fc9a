package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/intake"
	"github.com/palacehq/palace/host/ruleexport"
)

func newExportCmd(g *globals) *cobra.Command {
	var req ruleexport.Request
	cmd := &cobra.Command{
		Use:   "export --to agents-md|claude-md|cursor|copilot [--check] [--dry-run]",
		Short: "Write the repository's governed cards into the rule files agents read",
		Long: `Write the promoted and canonical cards anchored to this repository into the
rule files agents read on every request:

  agents-md   a generated block in AGENTS.md (hand-written text around it is kept)
  claude-md   the same block in CLAUDE.md
  cursor      .cursor/rules/palace-<field>[-<scope>].mdc: description, globs from
              the cards' path scopes, alwaysApply for unscoped core cards
  copilot     .github/instructions/palace-<field>[-<scope>].instructions.md with
              applyTo, plus a short block in .github/copilot-instructions.md

Each file has a budget in characters (--budget): core and high-value cards in
full, the rest as their statement or a one-line reference, ordered by tier and
value, each citing its card id. The output depends only on the cards: a second
export changes nothing. --check writes nothing and exits 1 when a file is stale
(for CI and pre-commit); --dry-run prints what would be written.`,
		Example: `  palace export --to agents-md
  palace export --to cursor --dry-run
  palace export --to copilot --check   # exit 1 when the files are stale`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withHost(cmd, func(ctx context.Context, h *host.Host) error {
				res, err := h.RuleExport().Export(ctx, req)
				if err != nil {
					return err
				}
				return g.verdict(res, func(w io.Writer) { printExport(w, req, res) }, !req.Check || !res.Stale)
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&req.Target, "to", "", "target: agents-md, claude-md, cursor or copilot")
	f.BoolVar(&req.Check, "check", false, "write nothing; exit 1 when a file differs from what the cards give")
	f.BoolVar(&req.DryRun, "dry-run", false, "write nothing; print each file that would change")
	f.IntVar(&req.Budget, "budget", 0, "characters per file (default 8000 for AGENTS.md/CLAUDE.md, 4000 per Cursor/Copilot file)")
	_ = cmd.RegisterFlagCompletionFunc("to", cobra.FixedCompletions(ruleexport.Targets(), cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func printExport(w io.Writer, req ruleexport.Request, res ruleexport.Result) {
	for _, f := range res.Files {
		line := fmt.Sprintf("%-12s %s", f.Action, f.Path)
		if f.Budget > 0 {
			line += fmt.Sprintf("  (%s; %d/%d characters)", formsLine(f), f.Used, f.Budget)
		}
		fmt.Fprintln(w, escapeControls(line))
		if f.Content != "" {
			fmt.Fprintf(w, "--- %s\n%s", f.Path, escapeControls(f.Content))
			if !strings.HasSuffix(f.Content, "\n") {
				fmt.Fprintln(w)
			}
			fmt.Fprintln(w, "---")
		}
	}
	for _, l := range res.LeftOut {
		fmt.Fprintf(w, "left out %s: %s\n", l.ID, escapeControls(l.Reason))
	}
	switch {
	case req.Check && res.Stale:
		fmt.Fprintf(w, "stale: run `palace export --to %s` and commit the result\n", res.Target)
	case req.Check:
		fmt.Fprintf(w, "up to date: %s\n", plural(res.Cards, "card"))
	}
}

// formsLine counts a file's cards by form: "3 full, 2 compact, 1 ref".
func formsLine(f ruleexport.File) string {
	counts := map[string]int{}
	for _, c := range f.Cards {
		counts[string(c.Form)]++
	}
	var parts []string
	for _, k := range []string{"full", "compact", "ref", "omitted"} {
		if counts[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
		}
	}
	if len(parts) == 0 {
		return "no cards"
	}
	return strings.Join(parts, ", ")
}

func newImportCmd(g *globals) *cobra.Command {
	var req intake.ImportRequest
	cmd := &cobra.Command{
		Use:   "import FILE…",
		Short: "Turn the rules of AGENTS.md, CLAUDE.md, Cursor or Copilot files into evidence and candidates",
		Long: `Read rule files — AGENTS.md, CLAUDE.md, .cursor/rules/*.mdc,
.github/instructions/*.instructions.md, .github/copilot-instructions.md, or any
Markdown list — and record each rule as evidence (source_ref FILE#Lline) with a
candidate card carrying the scope the file declares (Cursor globs, Copilot
applyTo, the directory of a nested AGENTS.md). Nothing is promoted: the
candidates are a queue to review with 'palace gate' and 'palace promote'.

Importing again is idempotent. Generated palace blocks are skipped (their cards
are governed already) unless --include-generated. Every file is checked before
anything is written: a binary, oversized (1 MiB), conflicted or malformed file
exits 2 naming the file and line, and nothing is imported.`,
		Example: `  palace import AGENTS.md CLAUDE.md
  palace import .cursor/rules/*.mdc --tier qi
  palace import .github/instructions/go.instructions.md --field go`,
		Args: cobra.MinimumNArgs(1),
		RunE: showing(g, func(ctx context.Context, h *host.Host, args []string) (intake.ImportResult, error) {
			req.Files = args
			return h.ImportRules(ctx, req)
		}, printImport),
	}
	f := cmd.Flags()
	f.StringVar(&req.Tier, "tier", "", "tier of the candidates (default shu; generated rules keep theirs)")
	f.StringVar(&req.Field, "field", "", "field of the candidates (default general)")
	f.StringVar(&req.Anchor, "anchor", "", "worktree, repo or global (default repo in a checkout)")
	f.BoolVar(&req.IncludeGenerated, "include-generated", false, "import the rules of palace blocks too (into a palace without those cards)")
	_ = cmd.RegisterFlagCompletionFunc("anchor", cobra.FixedCompletions(domain.Strings(domain.AnchorKinds), cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func printImport(w io.Writer, res intake.ImportResult) {
	for _, f := range res.Files {
		scope := ""
		if len(f.Scope) > 0 {
			scope = "  scope " + strings.Join(f.Scope, ", ")
		}
		fmt.Fprintln(w, escapeControls(fmt.Sprintf("%s (%s): %s%s", f.Path, f.Kind, plural(len(f.Rules), "rule"), scope)))
		for _, r := range f.Rules {
			what := "existing " + r.CardStatus
			if r.CardNew {
				what = "new candidate"
			}
			ev := "evidence recorded"
			if !r.EvidenceNew {
				ev = "evidence known"
			}
			fmt.Fprintln(w, escapeControls(fmt.Sprintf("  %s  %s %s (%s)  %s", r.SourceRef, what, r.CardID, ev, r.Statement)))
			printNear(w, "    ", r.NearDuplicates)
		}
		for _, b := range f.GeneratedSkipped {
			fmt.Fprintf(w, "  skipped the generated palace block, lines %d-%d (%s): its cards are governed already; --include-generated imports them\n", b.Start, b.End, plural(b.Rules, "rule"))
		}
	}
	fmt.Fprintf(w, "%s, %s; %d evidence recorded, %d known\n", plural(res.CardsNew, "new candidate"), plural(res.CardsExisting, "existing card"), res.EvidenceNew, res.EvidenceExisting)
	if res.CardsNew > 0 {
		fmt.Fprintln(w, "next: review them with `palace card list --status candidate` and `palace gate ID`")
	}
}
