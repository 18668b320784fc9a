package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/adoption"
)

func newAdoptCmd(g *globals) *cobra.Command {
	var req adoption.Request
	cmd := &cobra.Command{
		Use:   "adopt SIGNAL [--card ID] [--request ID] [--note N]",
		Short: "Record what happened with a card or a pack: used, accepted, rejected, miss, rollback, contradiction, neutral",
		Long: `Record an adoption signal (append-only, both modes: it is evidence, not authority).

  used / accepted       the card helped (warms it for requests like --request)
  rejected / rollback   the card did not fit or its advice was undone (cools it for such requests)
  miss                  palace did not give knowledge that was needed (--note says what;
                        --card when the card exists but was not in the pack)
  contradiction         what was seen contradicts the card: with --evidence it contests
                        the card (a reference with a warning citing that evidence until
                        a person demotes or resolves it); without, it is only a
                        suggestion to review in palace audit
  neutral               the card was seen and made no difference

A signal never changes a card's status and never counts toward a gate, and it
may lower a card's rank but never takes a card the request is about out of the
inline lanes. It counts once per actor, card and request (a repeat is recorded
and counts nowhere), and at most 3 signals of agents (and 3 of people) count on
a card per day. The record is checked first: an unknown signal or id, a card
signal without --card, a card or evidence outside this checkout's memory
(worktree, repository, global), or a miss that says nothing is refused (exit 2,
nothing written); an outcome signal with neither --note nor --request, a
contradiction without --evidence, or a request that is not on record are
warnings, refused too unless --allow-warnings. --check prints the check and
writes nothing (exit 0 when ready, 1 otherwise).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req.Signal = args[0]
			return g.withHost(cmd, func(ctx context.Context, h *host.Host) error {
				res, err := h.Adoption().Adopt(ctx, req)
				if err != nil {
					return err
				}
				return g.verdict(res, func(w io.Writer) { printAdopt(w, res) }, !req.CheckOnly || res.Quality == "ready")
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&req.CardID, "card", "", "the card the signal is about (kc_…); required but for a miss")
	fl.StringVar(&req.RequestID, "request", "", "the context pack's request_id (rq_…): the signal counts for requests like it")
	fl.StringVar(&req.Note, "note", "", "what happened, in a sentence")
	fl.StringVar(&req.Query, "query", "", "what was asked or needed, when no request id names it")
	fl.StringVar(&req.Field, "field", "", "topic (default the card's field)")
	fl.StringVar(&req.EvidenceID, "evidence", "", "evidence a contradiction rests on (ev_…)")
	fl.BoolVar(&req.AllowWarnings, "allow-warnings", false, "record a signal whose check found only warnings")
	fl.BoolVar(&req.CheckOnly, "check", false, "check the record and write nothing")
	return cmd
}

func printAdopt(w io.Writer, r adoption.Result) {
	p := newPainter(w)
	switch {
	case r.Written:
		fmt.Fprintf(w, "recorded %s %s\n", r.Event.Signal, r.Event.ID)
	default:
		fmt.Fprintf(w, "check: %s (nothing written)\n", r.Quality)
	}
	for _, e := range r.Errors {
		fmt.Fprintf(w, "  %s %s\n", p.paint("31", "error:"), escapeControls(e))
	}
	for _, x := range r.Warnings {
		fmt.Fprintf(w, "  %s %s\n", p.paint("33", "warning:"), escapeControls(x))
	}
	if r.Quality != "invalid" {
		fmt.Fprintf(w, "  %s\n", p.dim(r.Effect))
	}
}

func newAdoptionCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "adoption stats|review",
		Short: "Report adoption signals: per card and field, and the misses to distill next",
	}
	var f adoption.Filter // one of the two runs
	stats := &cobra.Command{
		Use:   "stats [--card ID] [--since D]",
		Short: "Count used, accepted, rejected, miss… per card and per field (read-only)",
		Args:  cobra.NoArgs,
		RunE: showing(g, func(ctx context.Context, h *host.Host, _ []string) (adoption.Stats, error) {
			return h.Adoption().Stats(ctx, f)
		}, printAdoptionStats),
	}
	review := &cobra.Command{
		Use:   "review [--card ID] [--since D]",
		Short: "The stats, the misses grouped by field (the queue of knowledge to distill next), cards turned down or contradicted (read-only)",
		Args:  cobra.NoArgs,
		RunE: showing(g, func(ctx context.Context, h *host.Host, _ []string) (adoption.Review, error) {
			return h.Adoption().Review(ctx, f)
		}, printAdoptionReview),
	}
	for _, c := range []*cobra.Command{stats, review} {
		c.Flags().StringVar(&f.CardID, "card", "", "only this card's signals")
		c.Flags().StringVar(&f.Since, "since", "", "only signals since YYYY-MM-DD, an RFC 3339 time or Nd days ago")
	}
	cmd.AddCommand(stats, review)
	return cmd
}

// signalLine is "used 2 · rejected 1 · …" over every signal kind.
func signalLine(m map[string]int) string {
	parts := make([]string, 0, len(adoption.Signals))
	for _, s := range adoption.Signals {
		parts = append(parts, fmt.Sprintf("%s %d", s, m[s]))
	}
	return strings.Join(parts, " · ")
}

func printAdoptionStats(w io.Writer, st adoption.Stats) {
	since := "all time"
	if st.Since != "" {
		since = "since " + st.Since
	}
	fmt.Fprintf(w, "%s (%s): %s\n", plural(st.Total, "signal"), since, signalLine(st.Signals))
	if len(st.Cards) > 0 {
		fmt.Fprintln(w, "\nby card:")
		t := newTable(w)
		fmt.Fprintln(t, "ID\tTIER\tSTATUS\tUSED\tACC\tREJ\tMISS\tRBK\tCONTRA\tNEUTRAL\tSTATEMENT")
		for _, c := range st.Cards {
			s := c.Signals
			fmt.Fprintf(t, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", c.ID, orDash(c.Tier), orDash(c.Status), s["used"], s["accepted"], s["rejected"],
				s["miss"], s["rollback"], s["contradiction"], s["neutral"], truncate(escapeControls(c.Statement), 50))
		}
		t.Flush()
	}
	if len(st.Fields) > 0 {
		fmt.Fprintln(w, "\nby field:")
		for _, f := range st.Fields {
			fmt.Fprintf(w, "  %-20s %s\n", escapeControls(f.Field), signalLine(f.Signals))
		}
	}
}

func printAdoptionReview(w io.Writer, r adoption.Review) {
	p := newPainter(w)
	printAdoptionStats(w, r.Stats)
	if len(r.Misses) > 0 {
		fmt.Fprintln(w, "\nmisses, the knowledge to distill next:")
		for _, g := range r.Misses {
			fmt.Fprintf(w, "  %s (%s)\n", escapeControls(g.Field), plural(g.Count, "miss"))
			for _, n := range g.Needs {
				what := cmp.Or(n.Note, n.Query)
				extra := ""
				if len(n.CardIDs) > 0 {
					extra = " · card " + strings.Join(n.CardIDs, ", ")
				}
				if len(n.RequestIDs) > 0 {
					extra += " · request " + strings.Join(n.RequestIDs, ", ")
				}
				fmt.Fprintf(w, "    %d× %s%s\n", n.Count, escapeControls(what), p.dim(extra))
			}
			fmt.Fprintf(w, "    %s\n", p.dim(g.Command))
		}
	}
	for _, sec := range []struct {
		title string
		cards []adoption.CardAdoption
	}{{"turned down (cooled for requests like those):", r.TurnedDown}, {"contradicted (see palace audit for the suggested demotion):", r.Contradicted}} {
		if len(sec.cards) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s\n", sec.title)
		for _, c := range sec.cards {
			fmt.Fprintf(w, "  %s  %s\n", c.ID, truncate(escapeControls(c.Statement), 60))
			for _, n := range c.Notes {
				fmt.Fprintf(w, "    %s\n", escapeControls(n))
			}
		}
	}
	fmt.Fprintf(w, "\n%s\n", r.Conclusion)
}
