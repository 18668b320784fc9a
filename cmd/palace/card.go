package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/intake"
)

func newCardCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "card", Short: "List, show, audit and link knowledge cards"}
	cmd.AddCommand(newCardListCmd(g), newCardShowCmd(g), newCardEventsCmd(g), newCardLinkCmd(g))
	return cmd
}

func newCardListCmd(g *globals) *cobra.Command {
	var f host.CardFilter
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List cards, dao_tian first",
		Args:  cobra.NoArgs,
		RunE: showing(g, func(ctx context.Context, h *host.Host, _ []string) (cardList, error) {
			cards, total, err := h.ListCardsTotal(ctx, f)
			return cardList{nonNil(cards), total}, err
		}, printCardList),
	}
	fl := cmd.Flags()
	fl.StringVar(&f.Tier, "tier", "", "qi, shu, dao_ren or dao_tian")
	fl.StringVar(&f.Status, "status", "", "candidate, promoted, canonical, demoted or retired")
	fl.StringVar(&f.Anchor, "anchor", "", "worktree, repo, global or all (all needs --all-repos; default: every anchor visible from here)")
	fl.StringVar(&f.Field, "field", "", "field")
	fl.IntVar(&f.Limit, "limit", 0, "at most this many cards (0 = all)")
	fl.BoolVar(&f.AllRepos, "all-repos", false, "list every repository's cards, not only those visible from here")
	return cmd
}

type cardList struct {
	Cards []host.Card `json:"cards"`
	Total int         `json:"total"`
}

func printCardList(w io.Writer, l cardList) {
	if len(l.Cards) == 0 {
		fmt.Fprintln(w, "no cards match; distill one with `palace distill`")
		return
	}
	p := newPainter(w)
	rows := make([][]string, len(l.Cards))
	for i, c := range l.Cards {
		counts := fmt.Sprintf("%d/%d/%d/%d", c.Counts.Supporting, c.Counts.Verification, c.Counts.Teaching, c.Counts.Counterexample)
		rows[i] = []string{c.ID, string(c.Tier), string(c.Status), c.Anchor.Kind, c.Field, counts, truncate(c.Statement, 60)}
	}
	printTable(w, []string{"ID", "TIER", "STATUS", "ANCHOR", "FIELD", "S/V/T/C", "STATEMENT"}, rows, func(col int, cell string) string {
		text := strings.TrimRight(cell, " ") // the padding is left unpainted
		switch col {
		case 1:
			return p.tier(domain.Tier(text)) + cell[len(text):]
		case 2:
			return p.status(domain.Status(text)) + cell[len(text):]
		}
		return cell
	})
	shown := plural(len(l.Cards), "card")
	if l.Total > len(l.Cards) {
		shown = fmt.Sprintf("%d of %s", len(l.Cards), plural(l.Total, "card"))
	}
	fmt.Fprintf(w, "%s\n", p.dim(shown+" · S/V/T/C = supporting/verification/teaching/counterexample evidence"))
}

func newCardShowCmd(g *globals) *cobra.Command {
	var allRepos bool
	cmd := &cobra.Command{
		Use:   "show CARD_ID",
		Short: "Show one card with its anchor and evidence links (counts as a view: it warms the card's lane)",
		Args:  cobra.ExactArgs(1),
		RunE: showing(g, func(ctx context.Context, h *host.Host, args []string) (host.Card, error) {
			return h.ViewCard(ctx, args[0], allRepos)
		}, printCard),
	}
	cmd.Flags().BoolVar(&allRepos, "all-repos", false, "show a card of another repository")
	return cmd
}

func printCard(w io.Writer, c host.Card) {
	p := newPainter(w)
	fmt.Fprintf(w, "%s  %s %s\n", c.ID, p.tier(c.Tier), p.status(c.Status))
	fmt.Fprintf(w, "  %s\n", escapeControls(c.Statement))
	if c.Content != "" {
		for _, line := range strings.Split(strings.TrimRight(c.Content, "\n"), "\n") {
			fmt.Fprintf(w, "  %s\n", p.dim(line))
		}
	}
	t := newTable(w)
	fmt.Fprintf(t, "  anchor\t%s %s\n", c.Anchor.Kind, escapeControls(c.Anchor.Identity))
	fmt.Fprintf(t, "  domain/field\t%s / %s\n", c.Domain, escapeControls(c.Field))
	fmt.Fprintf(t, "  persistence\t%s · render %s\n", c.Persistence, c.RenderPref)
	review := ""
	if c.ReviewAfter != "" || c.ExpiresAt != "" {
		review = orDash(c.ReviewAfter) + " / " + orDash(c.ExpiresAt)
	}
	for _, row := range [][2]string{{"scope", c.Scope.String()}, {"trigger", triggerLine(c.Trigger)}, {"review/expiry", review},
		{"published from", c.OriginCard}, {"supersedes", c.Supersedes}, {"superseded by", strings.Join(c.SupersededBy, ", ")}, {"published to", c.PublishedTo}} {
		if row[1] != "" {
			fmt.Fprintf(t, "  %s\t%s\n", row[0], escapeControls(row[1]))
		}
	}
	fmt.Fprintf(t, "  evidence\t%s\n", countsLine(c.Counts))
	if c.Contest != nil {
		fmt.Fprintf(t, "  contested\tsince %s: %s\n", c.Contest.Since, escapeControls(c.Contest.Detail()))
		fmt.Fprintf(t, "  to do\t%s\n", c.Contest.Action)
	}
	if c.Stale != nil {
		fmt.Fprintf(t, "  stale\t%s\n", escapeControls(c.Stale.Reason))
		fmt.Fprintf(t, "  to do\t%s\n", c.Stale.Action)
	}
	t.Flush()
	for _, l := range c.Links {
		fmt.Fprintf(w, "    %-14s %s  %s\n", l.Role, l.EvidenceID, p.dim(orDash(l.SourceRef)))
	}
}

func triggerLine(t domain.Trigger) string {
	var parts []string
	if len(t.Patterns) > 0 {
		parts = append(parts, "patterns "+strings.Join(t.Patterns, ", "))
	}
	if len(t.Intents) > 0 {
		parts = append(parts, "intents "+strings.Join(t.Intents, ", "))
	}
	if len(t.ToolNeeds) > 0 {
		parts = append(parts, "tools "+strings.Join(t.ToolNeeds, ", "))
	}
	return strings.Join(parts, " · ")
}

func orDash[T ~string](s T) string {
	if s == "" {
		return "-"
	}
	return string(s)
}

func newCardEventsCmd(g *globals) *cobra.Command {
	var allRepos bool
	cmd := &cobra.Command{
		Use:   "events CARD_ID",
		Short: "Show a card's append-only audit trail",
		Args:  cobra.ExactArgs(1),
		RunE: showing(g, func(ctx context.Context, h *host.Host, args []string) (cardEvents, error) {
			evs, err := h.CardEvents(ctx, args[0], allRepos)
			return cardEvents{args[0], nonNil(evs)}, err
		}, printCardEvents),
	}
	cmd.Flags().BoolVar(&allRepos, "all-repos", false, "show the events of a card of another repository")
	return cmd
}

type cardEvents struct {
	CardID string         `json:"card_id"`
	Events []domain.Event `json:"events"`
}

func printCardEvents(w io.Writer, ce cardEvents) {
	p := newPainter(w)
	for _, e := range ce.Events {
		move := ""
		if e.FromStatus != e.ToStatus {
			move = fmt.Sprintf(" %s → %s", orDash(e.FromStatus), orDash(e.ToStatus))
		}
		fmt.Fprintf(w, "#%d %s  %s%s  by %s (%s)\n", e.Seq, e.CreatedAt, p.paint("1", string(e.Type)), move, escapeControls(e.Actor), e.ActorType)
		if e.Reason != "" {
			fmt.Fprintf(w, "   reason: %s\n", escapeControls(e.Reason))
		}
		if e.Policy != "" {
			fmt.Fprintf(w, "   policy: %s %s%s\n", escapeControls(e.Policy), shortHash(e.PolicyHash), escapeControls(reviewerOf(e.Decision)))
		}
		for _, l := range eventData(e.Data) {
			fmt.Fprintf(w, "   %s\n", p.dim(escapeControls(l)))
		}
	}
}

// reviewerOf names the reviewer recorded in a gate decision, if any.
func reviewerOf(decision json.RawMessage) string {
	var d struct {
		Reviewer struct{ Name, Type string } `json:"reviewer"`
	}
	if json.Unmarshal(decision, &d) != nil || d.Reviewer.Name == "" {
		return ""
	}
	return fmt.Sprintf(" · reviewer %s (%s)", d.Reviewer.Name, d.Reviewer.Type)
}

// eventData renders an event's data as "key: value" lines a person reads
// (links as "role evidence" pairs); --format json keeps the data as is.
func eventData(b json.RawMessage) []string {
	if len(b) == 0 {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return []string{compactJSON(b)}
	}
	var lines []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		lines = append(lines, strings.ReplaceAll(k, "_", " ")+": "+dataValue(k, m[k]))
	}
	return lines
}

func dataValue(key string, v any) string {
	switch v := v.(type) {
	case nil:
		return "-"
	case string:
		return v
	case bool, float64:
		return fmt.Sprint(v)
	case []any:
		if len(v) == 0 {
			return "none"
		}
		parts := make([]string, len(v))
		for i, it := range v {
			if l, ok := it.(map[string]any); ok && key == "links" {
				parts[i] = fmt.Sprintf("%v %v", l["role"], l["evidence_id"])
				continue
			}
			parts[i] = dataValue("", it)
		}
		return strings.Join(parts, ", ")
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func compactJSON(b json.RawMessage) string {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return string(b)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

func newCardLinkCmd(g *globals) *cobra.Command {
	var req host.LinkRequest
	cmd := &cobra.Command{
		Use:   "link CARD_ID --role ROLE --evidence EV",
		Short: "Link evidence to a card in a role (never changes status)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := args[0]
			return showing(g, func(ctx context.Context, h *host.Host, _ []string) (host.LinkResult, error) {
				return h.Link(ctx, id, req)
			}, func(w io.Writer, res host.LinkResult) {
				if !res.Added {
					fmt.Fprintf(w, "%s is already linked to %s as %s; nothing changed\n", req.EvidenceID, id, req.Role)
					return
				}
				fmt.Fprintf(w, "linked %s → %s as %s\n  evidence: %s\n", req.EvidenceID, id, req.Role, countsLine(res.Card.Counts))
				printExportNote(w, res.Export)
				if res.Contest != nil {
					fmt.Fprintf(w, "  %s is %s and now contested: context shows it as a reference with a warning until a human demotes it or runs `palace resolve %s --verification EV --reason R`\n", id, res.Card.Status, id)
				}
			})(cmd, args)
		},
	}
	cmd.Flags().StringVar(&req.Role, "role", "", "supporting, verification, counterexample or teaching")
	cmd.Flags().StringVar(&req.EvidenceID, "evidence", "", "the evidence id")
	cmd.Flags().StringVar(&req.Note, "note", "", "a note on the link")
	return cmd
}

type evidenceList struct {
	Evidence []intake.Evidence `json:"evidence"`
	Total    int               `json:"total"`
}

func newEvidenceCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "evidence", Short: "List, show and redact recorded evidence"}
	var f host.EvidenceFilter
	list := &cobra.Command{
		Use:   "list",
		Short: "List evidence, newest first (best match first with --query)",
		Args:  cobra.NoArgs,
		RunE: showing(g, func(ctx context.Context, h *host.Host, _ []string) (evidenceList, error) {
			evs, total, err := h.ListEvidence(ctx, f)
			return evidenceList{nonNil(evs), total}, err
		}, func(w io.Writer, l evidenceList) {
			t := newTable(w)
			fmt.Fprintln(t, "ID\tANCHOR\tFIELD\tPROVENANCE\tCONTENT")
			for _, e := range l.Evidence {
				fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%s\n", e.ID, e.Anchor.Kind, escapeControls(e.Field), e.Provenance, truncate(e.Content, 60))
			}
			t.Flush()
			fmt.Fprintf(w, "%d of %d shown\n", len(l.Evidence), l.Total)
		}),
	}
	list.Flags().StringVar(&f.Query, "query", "", "full-text search: evidence holding every word, best match first")
	list.Flags().StringVar(&f.Field, "field", "", "field")
	list.Flags().StringVar(&f.Anchor, "anchor", "", "worktree, repo, global or all (all needs --all-repos; default: every anchor visible from here)")
	list.Flags().BoolVar(&f.AllRepos, "all-repos", false, "list every repository's evidence")
	list.Flags().IntVar(&f.Limit, "limit", 50, "at most this many rows (0 = all); total counts every match")
	var showAll bool
	show := &cobra.Command{
		Use:   "show EVIDENCE_ID",
		Short: "Show one piece of evidence",
		Args:  cobra.ExactArgs(1),
		RunE: showing(g, func(ctx context.Context, h *host.Host, args []string) (intake.Evidence, error) {
			return h.ShowEvidence(ctx, args[0], showAll)
		}, func(w io.Writer, e intake.Evidence) {
			fmt.Fprintf(w, "%s  %s · %s · %s anchor · %s\n", e.ID, escapeControls(e.Field), e.Provenance, e.Anchor.Kind, e.CreatedAt)
			if e.SourceRef != "" {
				fmt.Fprintf(w, "source: %s\n", escapeControls(e.SourceRef))
			}
			if len(e.Tags) > 0 {
				fmt.Fprintf(w, "tags: %s\n", escapeControls(strings.Join(e.Tags, ", ")))
			}
			if e.DuplicateOf != "" {
				fmt.Fprintf(w, "duplicate of: %s (counted once, as the original)\n", e.DuplicateOf)
			}
			if e.Redaction != nil {
				fmt.Fprintf(w, "redacted: %s by %s: %s\n", e.Redaction.CreatedAt, escapeControls(e.Redaction.Actor), escapeControls(e.Redaction.Reason))
			}
			fmt.Fprintf(w, "\n%s\n", escapeControls(strings.TrimRight(e.Content, "\n")))
		}),
	}
	show.Flags().BoolVar(&showAll, "all-repos", false, "show evidence of another repository")
	var reason string
	redact := &cobra.Command{
		Use:   "redact EVIDENCE_ID --reason TEXT",
		Short: "Replace one piece of evidence's content with a redaction notice (human mode)",
		Long: `Replace the content of evidence ID with a notice saying who redacted it, when
and why, for content that must not be kept (a leaked credential). The row keeps
its id, its other fields and the SHA-256 of the original content; the redaction
is recorded, shown by 'evidence show', and cannot be undone or repeated.
Refused in agent mode (exit 3).`,
		Args: cobra.ExactArgs(1),
		RunE: showing(g, func(ctx context.Context, h *host.Host, args []string) (intake.Evidence, error) {
			return h.RedactEvidence(ctx, args[0], reason)
		}, func(w io.Writer, e intake.Evidence) {
			fmt.Fprintf(w, "redacted %s\n%s\n", e.ID, escapeControls(e.Content))
		}),
	}
	redact.Flags().StringVar(&reason, "reason", "", "why the content is redacted (required)")
	cmd.AddCommand(list, show, redact)
	return cmd
}
