package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/intake"
	"github.com/palacehq/palace/internal/neardup"
)

func newDistillCmd(g *globals) *cobra.Command {
	var req intake.DistillRequest
	cmd := &cobra.Command{
		Use:   "distill --statement S --tier T --supporting ID… | --from CARD --tier T",
		Short: "Distill a candidate card from evidence",
		Long: `Create a candidate knowledge card citing existing evidence. At least one
--supporting ref is required; every ref must be evidence visible from here.
In human mode, --direct --status promoted|canonical writes an authoritative card
without the gate (audited as direct_write).

--from CARD supersedes a card of this checkout, to raise its tier (or restate
it): the new card takes every field not given from it and cites its evidence in
the same roles; it is a candidate like any other, and the gate decides its
promotion at its tier. When it becomes authoritative the old card is retired in
the same transaction.

A statement close to one at the same anchor (a near-duplicate) is written but
named in a warning with the existing card's id: link evidence to that card
instead when they say the same.`,
		Args: cobra.NoArgs,
		RunE: showing(g, func(ctx context.Context, h *host.Host, _ []string) (host.Card, error) {
			c, err := h.Distill(ctx, req)
			nearWarnings(g.stderr, c.NearDuplicates) // a failed distill has none
			return c, err
		}, func(w io.Writer, c host.Card) {
			p := newPainter(w)
			fmt.Fprintf(w, "distilled %s  %s %s  %s anchor\n  %s\n", c.ID, p.tier(c.Tier), p.status(c.Status), c.Anchor.Kind, escapeControls(c.Statement))
			fmt.Fprintf(w, "  evidence: %s\n", countsLine(c.Counts))
			if c.Status == domain.StatusCandidate {
				fmt.Fprintf(w, "next: palace gate %s\n", c.ID)
			}
		}),
	}
	f := cmd.Flags()
	f.StringVar(&req.Statement, "statement", "", "the short wake-up form (≤ 280 characters)")
	f.StringVar(&req.Content, "content", "", "the longer explanation: rationale, boundaries")
	f.StringVar(&req.Tier, "tier", "", "qi, shu, dao_ren or dao_tian")
	f.StringVar(&req.Domain, "domain", "", "project, agent, skill or global")
	f.StringVar(&req.Field, "field", "", "field (default general)")
	f.StringVar(&req.Anchor, "anchor", "", "worktree, repo or global (default the innermost)")
	listFlag(f, &req.Supporting, "supporting", "supporting evidence id")
	listFlag(f, &req.Verification, "verification", "verification evidence id")
	listFlag(f, &req.Teaching, "teaching", "teaching evidence id")
	listFlag(f, &req.Counterexample, "counterexample", "counterexample evidence id")
	verbatimFlag(f, &req.Scope.Paths, "scope-path", "path glob the card applies to (** allowed)")
	listFlag(f, &req.Scope.Languages, "scope-lang", "language the card applies to")
	listFlag(f, &req.Scope.Fields, "scope-field", "field the card applies to")
	verbatimFlag(f, &req.Trigger.Patterns, "trigger-pattern", "regular expression over code or text that wakes the card")
	listFlag(f, &req.Trigger.Intents, "intent", "intent tag that wakes the card")
	listFlag(f, &req.Trigger.ToolNeeds, "tool-need", "tool the card is about")
	f.StringVar(&req.Persistence, "persistence", "", "standard, protected or foundational")
	f.StringVar(&req.RenderPref, "render-pref", "", "auto, inline_full, inline_compact or ref_preferred")
	f.StringVar(&req.ReviewAfter, "review-after", "", "date after which the card should be reviewed (YYYY-MM-DD)")
	f.StringVar(&req.ExpiresAt, "expires-at", "", "date the card stops applying (YYYY-MM-DD)")
	f.BoolVar(&req.Direct, "direct", false, "write the card straight to --status, bypassing the gate (human mode, audited)")
	f.StringVar(&req.Status, "status", "", "with --direct: promoted or canonical")
	f.StringVar(&req.Reason, "reason", "", "why (recorded in the event)")
	f.StringVar(&req.From, "from", "", "a card this one supersedes (raise its tier, or restate it); its fields and evidence are the defaults")
	return cmd
}

// nearWarnings names, on stderr, the existing cards a new card nearly
// repeats: it is written, and a person or an agent decides whether to link
// evidence to the existing card instead.
func nearWarnings(w io.Writer, near []host.Neighbour) {
	for _, n := range near {
		alike := fmt.Sprintf("%.0f%% alike", 100*n.Similarity)
		if n.Exact {
			alike = "the same statement"
		}
		fmt.Fprintf(w, "palace: warning: near-duplicate of %s (%s %s, %s): %s — if they say the same, link the evidence to %s and retire the new card\n",
			n.ID, n.Tier, n.Status, alike, escapeControls(n.Statement), n.ID)
	}
}

// printNear names, indented, the existing cards a new card or a
// suggestion nearly repeats (import, sync, research).
func printNear(w io.Writer, indent string, near []neardup.Card) {
	for _, n := range near {
		alike := fmt.Sprintf("%.0f%% alike", 100*n.Similarity)
		if n.Exact {
			alike = "the same statement"
		}
		fmt.Fprintf(w, "%swarning: near-duplicate of %s (%s): %s\n", indent, n.ID, alike, escapeControls(n.Statement))
	}
}

func countsLine(c domain.RoleCounts) string {
	return fmt.Sprintf("%d supporting · %d verification · %d teaching · %d counterexample",
		c.Supporting, c.Verification, c.Teaching, c.Counterexample)
}
