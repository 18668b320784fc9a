package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/pack"
)

func newBriefCmd(g *globals) *cobra.Command {
	var req pack.BriefRequest
	var daoTian int
	cmd := &cobra.Command{
		Use:   "brief [QUERY]",
		Short: "A deterministic, cited brief over the context selection (no LLM)",
		Long: `Brief the cards that apply here (the same selection as 'palace context', without a
budget): a summary, key facts from authoritative cards, the evidence they cite,
the cards with citations, entities (commands, paths, URLs, identifiers) and
unresolved items found in the cited text, uncertainty signals, and next actions
with their commands. Writes nothing.`,
		Example: `  palace brief "sqlite locking" --file store/db.go
  palace brief --field storage --format json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			req.Query = strings.Join(args, " ")
			if cmd.Flags().Changed("dao-tian-limit") {
				req.DaoTianLimit = &daoTian
			}
			return showing(g, func(ctx context.Context, h *host.Host, _ []string) (pack.Brief, error) {
				b, err := h.Pack().Brief(ctx, req)
				policyNotice(g.stderr, b.Policy) // a failed brief has none
				return b, err
			}, printBrief)(cmd, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&req.File, "file", "", "the file the agent works on")
	f.StringVar(&req.Language, "language", "", "language id (default: from --file's extension)")
	f.StringVar(&req.Field, "field", "", "knowledge field of the request")
	listFlag(f, &req.Intents, "intent", "what the agent is doing")
	listFlag(f, &req.Tools, "tool", "tools the agent will use")
	f.IntVar(&daoTian, "dao-tian-limit", pack.DefaultDaoTianLimit, "at most this many dao_tian cards (0 leaves dao_tian out)")
	f.BoolVar(&req.IncludeCandidates, "include-candidates", false, "brief candidate cards too (never as key facts)")
	f.BoolVar(&req.AllRepos, "all-repos", false, "explicitly include every repository's cards")
	return cmd
}

func printBrief(w io.Writer, b pack.Brief) {
	p := newPainter(w)
	head := func(s string) { fmt.Fprintf(w, "\n%s\n", p.paint("1", s)) }
	fmt.Fprintln(w, escapeControls(b.Summary))
	if len(b.KeyFacts) > 0 {
		head("Key facts")
		for _, f := range b.KeyFacts {
			fmt.Fprintf(w, "  - [%s] %s  %s\n", p.tier(f.Tier), escapeControls(f.Statement), p.dim(f.CardID+" · "+f.Anchor+" · cites "+orDash(strings.Join(f.Cites, ", "))))
		}
	}
	if len(b.Cards) > 0 {
		head("Cards")
		for _, c := range b.Cards {
			fmt.Fprintf(w, "  %s  %s %s  lane %s (salience %d) · %s\n", c.ID, p.tier(c.Tier), p.status(c.Status), c.Lane, c.Salience, countsLine(c.Evidence))
			if c.Contest != nil {
				fmt.Fprintf(w, "      %s %s — do not apply it until a human demotes or resolves it\n", p.paint("33", "contested:"), escapeControls(c.Contest.Detail()))
			}
			for _, ct := range c.Citations {
				fmt.Fprintf(w, "      %-14s %s  %s\n", ct.Role, ct.EvidenceID, p.dim(orDash(ct.SourceRef)))
			}
		}
	}
	if len(b.Evidence) > 0 {
		head("Evidence")
		for _, e := range b.Evidence {
			by := "matched by the query, cited by no card here"
			if !e.Matched {
				by = strings.Join(e.Roles, "/") + " of " + strings.Join(e.CitedBy, ", ")
			}
			fmt.Fprintf(w, "  %s  %s · %s · %s\n    %s\n", e.ID, escapeControls(e.Field), escapeControls(orDash(e.SourceRef)), p.dim(by), escapeControls(e.Excerpt))
		}
	}
	if len(b.Entities) > 0 {
		head("Entities")
		for _, e := range b.Entities {
			fmt.Fprintf(w, "  %-10s %s  %s\n", e.Kind, escapeControls(e.Text), p.dim(fmt.Sprintf("×%d in %s", e.Count, strings.Join(e.Sources, ", "))))
		}
	}
	if len(b.Unresolved) > 0 {
		head("Unresolved")
		for _, c := range b.Unresolved {
			fmt.Fprintf(w, "  - %s  %s\n", escapeControls(c.Text), p.dim("("+c.Cue+", "+c.Source+")"))
		}
	}
	head("Uncertainty")
	if len(b.Uncertainty) == 0 {
		fmt.Fprintln(w, "  none found")
	}
	for _, s := range b.Uncertainty {
		fmt.Fprintf(w, "  - %s: %s\n", p.paint("33", s.Code), escapeControls(s.Message))
	}
	if len(b.NextActions) > 0 {
		head("Next actions")
		for i, a := range b.NextActions {
			fmt.Fprintf(w, "  %d. %s: %s\n     %s\n", i+1, a.Action, escapeControls(a.Why), p.dim(a.Command))
		}
	}
}
