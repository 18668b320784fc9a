package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/adoption"
	"github.com/palacehq/palace/host/audit"
	"github.com/palacehq/palace/host/teamsync"
)

func newAuditCmd(g *globals) *cobra.Command {
	var f audit.Filter
	var cand host.CandidateRequest
	var listCandidates bool
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Audit authoritative cards: lanes, salience, 30-day counts, warnings, suggested actions",
		Long: `List every authoritative card with the lane and render form it gets where it fits
best, its salience and breakdown, its 30-day injection counts and adoption
signals, review and expiry dates, warnings (contested, stale, overbroad_scope,
cooling, idle, review_due, expired, never_applied, conflict, contradicted,
turned_down) and suggested actions. Contested cards come first. Read-only.

A card is stale when code its evidence cites changed or vanished since the
evidence saw it (checked against its newest code-citing verification, else
its supporting evidence), or when its review date or expiry passed. Stale
cards are listed again in their own section with the repair: re-verify
(palace verify ID) or demote; for a date, a new date.

--candidates lists the candidate cards instead, oldest first, marking those
older than --candidate-days (default $PALACE_CANDIDATE_DAYS, else 30) or past
their expiry; --apply-expiry archives (retires) those, each with an event
(human mode).

Act on a row with 'palace audit action ID --action …' (human mode).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if listCandidates || cand.Apply {
				return showing(g, func(ctx context.Context, h *host.Host, _ []string) (host.CandidateReport, error) {
					return h.Candidates(ctx, cand)
				}, printCandidates)(cmd, args)
			}
			return showing(g, func(ctx context.Context, h *host.Host, _ []string) (host.AuditReport, error) {
				return h.Audit(ctx, f)
			}, printAudit)(cmd, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.Lane, "lane", "", "core, scoped, ref_only or inspector_only")
	fl.StringVar(&f.Anchor, "anchor", "", "worktree, repo, global or all (all needs --all-repos; default: every anchor visible from here)")
	fl.BoolVar(&f.AllRepos, "all-repos", false, "audit every repository's cards")
	fl.BoolVar(&listCandidates, "candidates", false, "list candidate cards by age, marking the stale ones")
	fl.BoolVar(&cand.Apply, "apply-expiry", false, "archive (retire) candidates older than --candidate-days or past their expiry (human mode)")
	fl.IntVar(&cand.MaxAgeDays, "candidate-days", 0, "age in days from which a candidate is stale (default $PALACE_CANDIDATE_DAYS, else 30)")
	fl.StringVar(&f.Tier, "tier", "", "qi, shu, dao_ren or dao_tian")
	fl.StringVar(&f.Warning, "warning", "", "only rows with this warning: "+strings.Join(audit.Warnings, ", "))
	cmd.AddCommand(newAuditActionCmd(g))
	return cmd
}

func printCandidates(w io.Writer, rep host.CandidateReport) {
	p := newPainter(w)
	if len(rep.Candidates) == 0 {
		fmt.Fprintln(w, "no candidate cards here")
		return
	}
	t := newTable(w)
	fmt.Fprintln(t, "ID\tTIER\tANCHOR\tAGE\tSTALE\tSTATEMENT")
	for _, c := range rep.Candidates {
		fmt.Fprintf(t, "%s\t%s\t%s\t%dd\t%s\t%s\n", c.ID, p.tier(c.Tier), c.Anchor.Kind, c.AgeDays, orDash(c.Stale), truncate(c.Statement, 50))
	}
	t.Flush()
	if len(rep.Archived) > 0 {
		fmt.Fprintf(w, "archived %s: %s\n", plural(len(rep.Archived), "candidate"), strings.Join(rep.Archived, ", "))
		return
	}
	fmt.Fprintf(w, "%s\n", p.dim(fmt.Sprintf("%s · %d stale (older than %d days or expired) · archive them with `palace audit --apply-expiry`",
		plural(len(rep.Candidates), "candidate"), rep.Stale, rep.MaxAgeDays)))
}

func printAudit(w io.Writer, rep host.AuditReport) {
	p := newPainter(w)
	defer printHeld(w, rep.Held)
	if len(rep.Rows) == 0 {
		fmt.Fprintf(w, "no authoritative card matches (%s audited)\n", plural(rep.Audited, "card"))
		return
	}
	t := newTable(w)
	fmt.Fprintln(t, "ID\tTIER\tANCHOR\tLANE\tFORM\tSAL\tA/S/T/V 30d\tSIGNALS 30d\tREVIEW\tSTATEMENT")
	for _, r := range rep.Rows {
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%s\t%d\t%d/%d/%d/%d\t%s\t%s\t%s\n", r.ID, p.tier(r.Tier), r.Anchor.Kind, r.Lane, r.RenderForm, r.Salience,
			r.Counts30d.Applied, r.Counts30d.Skipped, r.Counts30d.Trimmed, r.Counts30d.Viewed, signalLine(r.Signals30d, false), orDash(r.ReviewAfter[:min(10, len(r.ReviewAfter))]), truncate(r.Statement, 50))
	}
	t.Flush()
	for _, r := range rep.Rows {
		if len(r.Warnings) == 0 && len(r.Suggested) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s  %s  salience %d (%s)\n", r.ID, r.Lane, r.Salience, breakdownLine(r.SalienceBreakdown))
		for _, x := range r.Warnings {
			fmt.Fprintf(w, "  %s %s\n", p.paint("33", "warning "+x.Code+":"), escapeControls(x.Message))
		}
		for _, s := range r.Suggested {
			fmt.Fprintf(w, "  suggest %s: %s\n    %s\n", s.Action, escapeControls(s.Why), p.dim(s.Command))
		}
	}
	printStaleSection(w, rep.Stale)
	fmt.Fprintf(w, "\n%s\n", p.dim(fmt.Sprintf("%s audited · core %d · scoped %d · ref_only %d · inspector_only %d · lanes where each card fits best · A/S/T/V = applied/skipped/trimmed/viewed",
		plural(rep.Audited, "card"), rep.Lanes[domain.LaneCore], rep.Lanes[domain.LaneScoped], rep.Lanes[domain.LaneRefOnly], rep.Lanes[domain.LaneInspectorOnly])))
}

// printStaleSection lists the stale cards with what changed and the
// commands that repair each.
func printStaleSection(w io.Writer, cards []audit.StaleCard) {
	if len(cards) == 0 {
		return
	}
	p := newPainter(w)
	head := "stale: 1 card no longer matches what it rests on"
	if len(cards) > 1 {
		head = fmt.Sprintf("stale: %d cards no longer match what they rest on", len(cards))
	}
	fmt.Fprintf(w, "\n%s\n", p.paint("33", head))
	for _, c := range cards {
		fmt.Fprintf(w, "  %s %s %s\n", c.ID, p.tier(c.Tier), escapeControls(truncate(c.Statement, 60)))
		for _, sc := range c.Stale.Citations {
			fmt.Fprintf(w, "    %s: %s since %s saw it\n", escapeControls(orDash(sc.SourceRef)), escapeControls(sc.Detail), sc.EvidenceID)
		}
		if len(c.Stale.Citations) == 0 {
			fmt.Fprintf(w, "    %s\n", escapeControls(c.Stale.Reason))
		}
		for _, r := range c.Repair {
			fmt.Fprintf(w, "    repair %s: %s\n      %s\n", r.Action, escapeControls(r.Why), p.dim(r.Command))
		}
	}
}

func newAuditActionCmd(g *globals) *cobra.Command {
	var req host.AuditActionRequest
	var sc domain.Scope
	var tr domain.Trigger
	cmd := &cobra.Command{
		Use:   "action CARD_ID --action ACTION",
		Short: "Apply a governed audit action to a card (human mode; each is an event)",
		Long: `Actions: rescope (--scope-path/--scope-lang/--scope-field, or --value none),
retrigger (--trigger-pattern/--intent/--tool-need, or --value none),
revoke (retires the card; --reason required), set_expiry and set_review_after
(--value YYYY-MM-DD or none), mark_foundational, prefer_compact, set_persistence
(--value standard|protected|foundational), set_render_pref (--value
auto|inline_full|inline_compact|ref_preferred).

Widening a card's anchor is not an audit action: use 'palace publish'.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fl := cmd.Flags()
			if fl.Changed("scope-path") || fl.Changed("scope-lang") || fl.Changed("scope-field") {
				req.Scope = &sc
			} else if req.Action == domain.AuditRescope && req.Value == "none" {
				req.Scope = &domain.Scope{}
			}
			if fl.Changed("trigger-pattern") || fl.Changed("intent") || fl.Changed("tool-need") {
				req.Trigger = &tr
			} else if req.Action == domain.AuditRetrigger && req.Value == "none" {
				req.Trigger = &domain.Trigger{}
			}
			return showing(g, func(ctx context.Context, h *host.Host, args []string) (host.AuditActionResult, error) {
				return h.AuditAction(ctx, args[0], req)
			}, func(w io.Writer, res host.AuditActionResult) {
				fmt.Fprintf(w, "%s %s: %s\n", res.Action, res.Card.ID, eventChange(res.Event))
				printCard(w, res.Card)
			})(cmd, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&req.Action, "action", "", "one of "+strings.Join(audit.Actions, ", "))
	fl.StringVar(&req.Value, "value", "", "the new value (dates, persistence, render preference; none clears)")
	fl.StringVar(&req.Reason, "reason", "", "why (required for revoke)")
	fl.StringVar(&req.Anchor, "anchor", "", "rescope: the anchor kind it should live at (only its own; widen with palace publish)")
	verbatimFlag(fl, &sc.Paths, "scope-path", "rescope: path glob")
	listFlag(fl, &sc.Languages, "scope-lang", "rescope: language")
	listFlag(fl, &sc.Fields, "scope-field", "rescope: field")
	verbatimFlag(fl, &tr.Patterns, "trigger-pattern", "retrigger: a regular expression that wakes the card on matching lines")
	listFlag(fl, &tr.Intents, "intent", "retrigger: an intent that wakes the card")
	listFlag(fl, &tr.ToolNeeds, "tool-need", "retrigger: a tool the card is about")
	_ = cmd.MarkFlagRequired("action")
	return cmd
}

// eventChange summarizes an audit event's data.
func eventChange(e domain.Event) string {
	if e.Type == domain.EventRetired {
		return fmt.Sprintf("%s → retired (%s)", e.FromStatus, e.Reason)
	}
	var d struct {
		From string `json:"from"`
		To   string `json:"to"`
	}
	if err := json.Unmarshal(e.Data, &d); err != nil || d.To == "" {
		return string(e.Type)
	}
	return d.From + " → " + d.To
}

// printHeld lists imported cards whose file's claim of authority the gate
// refused.
func printHeld(w io.Writer, held []teamsync.HeldCard) {
	if len(held) == 0 {
		return
	}
	p := newPainter(w)
	fmt.Fprintf(w, "\n%s\n", p.paint("33", fmt.Sprintf("%s held as candidates: the card file claims authority the gate did not allow", plural(len(held), "imported card"))))
	for _, hc := range held {
		fmt.Fprintf(w, "%s  %s claims %s\n", hc.CardID, hc.Path, hc.Claimed)
		for _, r := range hc.Reasons {
			fmt.Fprintf(w, "  - %s\n", escapeControls(r))
		}
	}
}

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

// signalLine is "used 2 · rejected 1 · …" over every signal kind (all), or
// over those given, "-" for none.
func signalLine(m map[string]int, all bool) string {
	var parts []string
	for _, s := range adoption.Signals {
		if n := m[s]; all || n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", s, n))
		}
	}
	return orDash(strings.Join(parts, " · "))
}

func printAdoptionStats(w io.Writer, st adoption.Stats) {
	since := "all time"
	if st.Since != "" {
		since = "since " + st.Since
	}
	fmt.Fprintf(w, "%s (%s): %s\n", plural(st.Total, "signal"), since, signalLine(st.Signals, true))
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
			fmt.Fprintf(w, "  %-20s %s\n", escapeControls(f.Field), signalLine(f.Signals, true))
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
