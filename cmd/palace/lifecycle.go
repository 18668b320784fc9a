package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/spf13/cobra"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/gatekeep"
	"github.com/palacehq/palace/host/teamsync"
)

func newGateCmd(g *globals) *cobra.Command {
	var req host.GateRequest
	cmd := &cobra.Command{
		Use:   "gate CARD_ID",
		Short: "Ask the gate policy whether a card may be promoted (read-only)",
		Long: `Evaluate palace.gate for a card and print allow, reasons and what is missing.
Exit 0 when allowed, 1 when denied. Nothing is written.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.withHost(cmd, func(ctx context.Context, h *host.Host) error {
				res, err := h.Gate(ctx, args[0], req)
				if err != nil {
					return err
				}
				return g.verdict(res, func(w io.Writer) { printGate(w, res) }, res.Allow)
			})
		},
	}
	cmd.Flags().StringVar(&req.Target, "target", "", "promoted or canonical (default canonical for dao_tian, else promoted)")
	cmd.Flags().StringVar(&req.Reviewer, "reviewer", "", "reviewer name (human mode; default the OS user)")
	cmd.Flags().BoolVar(&req.AllowLocalPolicy, "allow-local-policy", false, "let an untracked or modified repo gate policy decide")
	cmd.Flags().BoolVar(&req.AllRepos, "all-repos", false, "ask about a card of another repository")
	return cmd
}

func printGate(w io.Writer, g gatekeep.Result) {
	p := newPainter(w)
	what := g.Target
	if g.Action == string(domain.ActionPublish) {
		what = "publish → " + g.Target
	}
	fmt.Fprintf(w, "gate %s  %s → %s\n", p.verdict(g.Allow), g.CardID, what)
	for _, r := range g.Reasons {
		fmt.Fprintf(w, "  - %s\n", escapeControls(r))
	}
	if len(g.Missing) > 0 {
		fmt.Fprint(w, "  missing:")
		for _, r := range slices.Sorted(maps.Keys(g.Missing)) {
			fmt.Fprintf(w, " %d %s", g.Missing[r], r)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "  %s\n", p.dim(fmt.Sprintf("evidence %s · reviewer %s (%s) · policy %s from %s %s%s",
		countsLine(g.Counts), g.Reviewer.Name, g.Reviewer.Type, g.Policy.Point.Package(), orDash(g.Policy.Source), shortHash(g.Policy.Hash), policyFileNote(g.Policy.File, g.Policy.FileState))))
}

// policyFileNote says which file decided and how git sees it.
func policyFileNote(file, state string) string {
	if file == "" {
		return ""
	}
	return fmt.Sprintf(" (%s, %s)", escapeControls(file), orDash(state))
}

// changing is the RunE of a lifecycle change of the card named by the first
// argument, printed with verb; a gate denial prints the gate's answer as
// the result and exits 1.
func (g *globals) changing(verb string, change func(context.Context, *host.Host, string) (host.ChangeResult, error)) func(*cobra.Command, []string) error {
	return showing(g, func(ctx context.Context, h *host.Host, args []string) (host.ChangeResult, error) {
		res, err := change(ctx, h, args[0])
		if err != nil {
			g.printDenial(err, res.Gate)
		}
		return res, err
	}, func(w io.Writer, res host.ChangeResult) {
		p := newPainter(w)
		fmt.Fprintf(w, "%s %s  %s → %s\n", verb, res.Card.ID, p.status(res.Event.FromStatus), p.status(res.Event.ToStatus))
		if res.Event.Policy != "" {
			note := ""
			if res.Gate != nil {
				note = policyFileNote(res.Gate.Policy.File, res.Gate.Policy.FileState)
				if res.Gate.AllowLocalPolicy && note != "" {
					note += " allowed by --allow-local-policy"
				}
			}
			fmt.Fprintf(w, "  %s\n", p.dim(fmt.Sprintf("allowed by %s %s%s · event #%d", res.Event.Policy, shortHash(res.Event.PolicyHash), note, res.Event.Seq)))
		} else {
			fmt.Fprintf(w, "  %s\n", p.dim(fmt.Sprintf("event #%d", res.Event.Seq)))
		}
		printExportNote(w, res.Export)
	})
}

// printExportNote says which card file a change wrote (palace.autoExport).
func printExportNote(w io.Writer, n *teamsync.ExportNote) {
	switch {
	case n == nil:
	case n.Path != "":
		fmt.Fprintf(w, "  %s\n", newPainter(w).dim("wrote "+n.Path))
	default:
		fmt.Fprintf(w, "  card file not written: %s\n", escapeControls(n.Skipped))
	}
}

// printDenial prints the gate's answer as the command's result when the
// gate (or a floor) said no; the error itself goes to stderr as usual.
func (g *globals) printDenial(err error, gate *gatekeep.Result) {
	if gate == nil || host.KindOf(err) != host.KindDenied {
		return
	}
	if g.json() {
		printJSON(g.stdout, gate)
		return
	}
	printGate(g.stdout, *gate)
}

func newPromoteCmd(g *globals) *cobra.Command {
	var req host.PromoteRequest
	cmd := &cobra.Command{
		Use:   "promote CARD_ID --reason R",
		Short: "Promote a card through the gate (human mode)",
		Args:  cobra.ExactArgs(1),
		RunE: g.changing(string(domain.StatusPromoted), func(ctx context.Context, h *host.Host, id string) (host.ChangeResult, error) {
			return h.Promote(ctx, id, req)
		}),
	}
	f := cmd.Flags()
	f.StringVar(&req.Reason, "reason", "", "why the card is ready (required)")
	f.StringVar(&req.Target, "target", "", "promoted or canonical")
	f.StringVar(&req.Reviewer, "reviewer", "", "reviewer name (default the OS user)")
	listFlag(f, &req.Verification, "verification", "verification evidence id to link first")
	f.BoolVar(&req.AllowLocalPolicy, "allow-local-policy", false, "let an untracked or modified repo gate policy decide (recorded in the event)")
	return cmd
}

func newResolveCmd(g *globals) *cobra.Command {
	var req host.ResolveRequest
	cmd := &cobra.Command{
		Use:   "resolve CARD_ID --verification EV… --reason R",
		Short: "Resolve a contested (or demoted) card with newer verification, through the gate (human mode)",
		Long: `Link newer verification evidence to a contested card and ask the gate
(action resolve) whether it outweighs what contested the card; the default
gate needs a verification recorded after the contest. On allow the card's
contests close and it returns to the inline lanes; a demoted card may then be
promoted again. Exit 1 when the gate denies (nothing is written), 2 when the
card is not contested, 3 in agent mode.`,
		Args: cobra.ExactArgs(1),
		RunE: g.changing("resolved", func(ctx context.Context, h *host.Host, id string) (host.ChangeResult, error) {
			return h.Resolve(ctx, id, req)
		}),
	}
	f := cmd.Flags()
	f.StringVar(&req.Reason, "reason", "", "what the newer verification shows (required)")
	f.StringVar(&req.Reviewer, "reviewer", "", "reviewer name (default the OS user)")
	listFlag(f, &req.Verification, "verification", "verification evidence id (at least one)")
	f.BoolVar(&req.AllowLocalPolicy, "allow-local-policy", false, "let an untracked or modified repo gate policy decide (recorded in the event)")
	return cmd
}

func newDemoteCmd(g *globals) *cobra.Command {
	var req host.DemoteRequest
	cmd := &cobra.Command{
		Use:   "demote CARD_ID --reason R --counterexample EV…",
		Short: "Demote a card on counterexample evidence (human mode)",
		Args:  cobra.ExactArgs(1),
		RunE: g.changing(string(domain.StatusDemoted), func(ctx context.Context, h *host.Host, id string) (host.ChangeResult, error) {
			return h.Demote(ctx, id, req)
		}),
	}
	f := cmd.Flags()
	f.StringVar(&req.Reason, "reason", "", "what the counterexample shows (required)")
	listFlag(f, &req.Counterexample, "counterexample", "counterexample evidence id (at least one)")
	f.StringVar(&req.Target, "target", "", "demoted (default) or retired")
	return cmd
}

func newRetireCmd(g *globals) *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use:   "retire CARD_ID --reason R",
		Short: "Retire a card: kept for audit, never served (human mode)",
		Args:  cobra.ExactArgs(1),
		RunE: g.changing(string(domain.StatusRetired), func(ctx context.Context, h *host.Host, id string) (host.ChangeResult, error) {
			return h.Retire(ctx, id, reason)
		}),
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why (required)")
	return cmd
}

func newPublishCmd(g *globals) *cobra.Command {
	var req host.PublishRequest
	cmd := &cobra.Command{
		Use:   "publish CARD_ID --to repo|global --reason R",
		Short: "Copy a card one anchor outward with provenance (human mode)",
		Args:  cobra.ExactArgs(1),
		RunE: showing(g, func(ctx context.Context, h *host.Host, args []string) (host.PublishResult, error) {
			res, err := h.Publish(ctx, args[0], req)
			if err != nil {
				g.printDenial(err, res.Gate)
			}
			return res, err
		}, func(w io.Writer, res host.PublishResult) {
			fmt.Fprintf(w, "published %s → %s at the %s anchor (%s)\n  the original stays, stamped published_to %s\n",
				res.Original.ID, res.Copy.ID, res.Copy.Anchor.Kind, res.Copy.Anchor.Identity, res.Copy.ID)
			printExportNote(w, res.Export)
		}),
	}
	cmd.Flags().StringVar(&req.To, "to", "", "repo or global: one step outward")
	cmd.Flags().StringVar(&req.Reason, "reason", "", "why the card holds beyond its anchor (required)")
	cmd.Flags().StringVar(&req.Reviewer, "reviewer", "", "reviewer name (default the OS user)")
	cmd.Flags().BoolVar(&req.AllowLocalPolicy, "allow-local-policy", false, "let an untracked or modified repo gate policy decide (recorded in the events)")
	return cmd
}

func newVerifyCmd(g *globals) *cobra.Command {
	var req host.VerifyRequest
	cmd := &cobra.Command{
		Use:   "verify ID [--evidence EV]…",
		Short: "Verify a card against the code as it is now (records a verification; never promotes)",
		Long: `Look at the code card ID is checked against — the places its newest
code-citing verification saw, or, with none, its supporting evidence —
where it is now (moved lines and files git saw renamed are followed), record
what it holds as one verification evidence row and link it to the card. A
stale card is fresh again. A verification is evidence: the card's status
does not change. Both modes.

--evidence EV verifies against the code EV cites instead: one citation of
the card, or evidence recorded where the code moved to (palace record
--source-ref PATH#L10-L24 …).

Exit 0 when the verification is recorded (or was on record for this very
code), 1 when code the card cites is gone (a deleted file, lines past the
end of a file, a symbol no longer defined: point it at the code's new place
with --evidence, or demote it), 2 for bad input (an unknown card, a card or
evidence citing no file of this checkout, outside git).`,
		Args: cobra.ExactArgs(1),
		RunE: showing(g, func(ctx context.Context, h *host.Host, args []string) (host.VerifyResult, error) {
			return h.Verify(ctx, args[0], req)
		}, printVerify),
	}
	f := cmd.Flags()
	listFlag(f, &req.Evidence, "evidence", "verify against the code this evidence cites")
	f.StringVar(&req.Note, "note", "", "what was checked, added to the verification")
	return cmd
}

func printVerify(w io.Writer, res host.VerifyResult) {
	p := newPainter(w)
	switch {
	case res.Linked:
		fmt.Fprintf(w, "verified %s: recorded %s as its verification\n", res.Card.ID, res.Evidence.ID)
	default:
		fmt.Fprintf(w, "verified %s: %s is its verification of this code already\n", res.Card.ID, res.Evidence.ID)
	}
	for _, c := range res.Checked {
		line := fmt.Sprintf("  %s  %s", c.State, escapeControls(c.Now))
		if c.Detail != "" {
			line += " (" + escapeControls(c.Detail) + " since " + c.EvidenceID + " saw it)"
		} else if c.SourceRef != c.Now {
			line += " (cited as " + escapeControls(c.SourceRef) + ")"
		}
		fmt.Fprintln(w, line)
	}
	switch {
	case res.Card.Stale != nil:
		fmt.Fprintf(w, "  %s\n", p.paint("33", "still stale: "+escapeControls(res.Card.Stale.Reason)))
	case res.WasStale:
		fmt.Fprintf(w, "  %s\n", p.dim("it was stale; it is fresh now"))
	}
}
