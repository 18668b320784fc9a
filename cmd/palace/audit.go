package main

import (
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
			r.Counts30d.Applied, r.Counts30d.Skipped, r.Counts30d.Trimmed, r.Counts30d.Viewed, signalsCell(r.Signals30d), orDash(dateOnly(r.ReviewAfter)), truncate(r.Statement, 50))
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

// signalsCell is a card's adoption signals in a table cell: "used 2 ·
// rejected 1", "-" for none.
func signalsCell(m map[string]int) string {
	var parts []string
	for _, s := range adoption.Signals {
		if n := m[s]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", s, n))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " · ")
}

func dateOnly(s string) string {
	if len(s) >= 10 {
		return s[:10]
	}
	return s
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
