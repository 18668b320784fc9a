package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/agenthook"
	"github.com/palacehq/palace/host/pack"
	"github.com/palacehq/palace/internal/limits"
	"github.com/palacehq/palace/policies"
)

func newContextCmd(g *globals) *cobra.Command {
	var req pack.ContextRequest
	var daoTian int
	var hook string
	cmd := &cobra.Command{
		Use:   "context [QUERY]",
		Short: "Assemble the bounded, cited context pack an agent injects here",
		Long: `Assemble the context pack for this worktree: the authoritative cards of the
worktree, its repository and global memory (never another repository's, unless
--all-repos), filtered by the scope policy, laned by the lanes policy, packed
under a character budget without cutting any item, each with its citations.

Text output is the exact Markdown to inject; --explain appends the why-trace.
--format json prints the whole pack. Unless --dry-run, each request records
which card got which outcome (one short write after the pack is built; cards
out of scope are only counted); those counts cool cards that keep being
trimmed or skipped. Raw records are kept $PALACE_TELEMETRY_DAYS days (30).`,
		Example: `  palace context "sqlite locking" --file store/store.go --intent debug
  palace context --instruction "answer in plain text" --budget 2000
  palace context --all-repos --format json --dry-run`,
		RunE: func(cmd *cobra.Command, args []string) error {
			req.Query = strings.Join(args, " ")
			if cmd.Flags().Changed("dao-tian-limit") {
				req.DaoTianLimit = &daoTian
			}
			if hook != "" {
				return runContextHook(cmd, g, hook, req)
			}
			if err := checkBudget(req.Budget); err != nil {
				return err
			}
			return showing(g, func(ctx context.Context, h *host.Host, _ []string) (pack.Pack, error) {
				p, err := h.Pack().Context(ctx, req)
				policyNotice(g.stderr, p.Policy) // a failed request has none
				return p, err
			}, func(w io.Writer, p pack.Pack) {
				// Piped, the pack is the exact Markdown to inject; on a
				// terminal a person reads it, escaped.
				if isTTY(w) {
					fmt.Fprint(w, escapeControls(p.Rendered))
				} else {
					fmt.Fprint(w, p.Rendered)
				}
				if req.Explain {
					printExplain(w, p)
				}
			})(cmd, args)
		},
	}
	contextFlags(cmd, &req, &daoTian)
	f := cmd.Flags()
	f.BoolVar(&req.Explain, "explain", false, "append the why-trace: lanes, salience breakdowns, budget actions, skipped cards")
	f.BoolVar(&req.DryRun, "dry-run", false, "write nothing (no injection events, no request id unless --request-id)")
	f.StringVar(&req.RequestID, "request-id", "", "fix the request id (with a fixed database the pack is byte-identical)")
	f.StringVar(&hook, "hook", "", "answer an agent's hook: read its JSON payload on stdin, print its JSON answer (claude-code or gemini-cli)")
	return cmd
}

// checkBudget refuses --budget 0: the flag's default is DefaultBudget, so
// a 0 is typed, and a pack of no characters can hold no card. (The API's
// zero value means the default; the command line says it as a number.)
func checkBudget(budget int) error {
	if budget == 0 {
		return usageError{fmt.Sprintf("--budget 0 leaves no room for any card: pass a size in characters (default %d), or leave the flag out", pack.DefaultBudget)}
	}
	return nil
}

// contextFlags are the request flags context and brief share.
func contextFlags(cmd *cobra.Command, req *pack.ContextRequest, daoTian *int) {
	f := cmd.Flags()
	f.StringVar(&req.File, "file", "", "the file the agent works on (scope paths match it worktree-relative)")
	f.StringVar(&req.Language, "language", "", "language id (default: from --file's extension)")
	f.StringVar(&req.Field, "field", "", "knowledge field of the request")
	listFlag(f, &req.Intents, "intent", "what the agent is doing, matched against card trigger intents")
	listFlag(f, &req.Tools, "tool", "tools the agent will use, matched against card tool needs")
	f.StringArrayVar(&req.Instructions, "instruction", nil, "transient instruction for this request only: rendered first, never stored (repeat)")
	f.IntVar(&req.Budget, "budget", pack.DefaultBudget, "size limit of the rendered pack, in characters")
	f.IntVar(daoTian, "dao-tian-limit", pack.DefaultDaoTianLimit, "at most this many dao_tian items (0 leaves dao_tian out)")
	f.BoolVar(&req.IncludeEvidence, "include-evidence", false, "add up to five evidence rows matching the query")
	f.BoolVar(&req.IncludeCandidates, "include-candidates", false, "let candidate cards compete too (labelled as not yet authoritative)")
	f.BoolVar(&req.AllRepos, "all-repos", false, "explicitly pull cards of every repository, each labelled and grouped by origin")
}

// printExplain is the why-trace of a pack, after its rendering.
func printExplain(w io.Writer, p pack.Pack) {
	fmt.Fprintf(w, "\n---\n# why (not part of the pack)\n\n")
	for _, it := range p.Items {
		fmt.Fprintf(w, "%s  %s  lane %s → %s  salience %d (%s)\n", it.ID, it.Tier, it.Lane, it.RenderForm, it.Salience, breakdownLine(it.SalienceBreakdown))
		for _, why := range it.WhyApplies {
			fmt.Fprintf(w, "    why: %s\n", escapeControls(why))
		}
		fmt.Fprintf(w, "    30d: applied %d, skipped %d, trimmed %d, viewed %d · age %d days\n",
			it.Counts30d.Applied, it.Counts30d.Skipped, it.Counts30d.Trimmed, it.Counts30d.Viewed, it.AgeDays)
		if it.Trimmed != nil {
			fmt.Fprintf(w, "    budget: %s → %s: %s\n", it.Trimmed.From, it.Trimmed.To, it.Trimmed.Reason)
		}
	}
	for _, s := range p.Skipped {
		line := fmt.Sprintf("%s  %s  %s", s.ID, s.Tier, s.Reason)
		if s.DuplicateOf != "" {
			line += " of " + s.DuplicateOf
		}
		if s.Lane != "" {
			line += fmt.Sprintf("  lane %s salience %d", s.Lane, s.Salience)
			if len(s.SalienceBreakdown) > 0 {
				line += " (" + breakdownLine(s.SalienceBreakdown) + ")"
			}
		}
		fmt.Fprintln(w, escapeControls(line))
		for _, why := range s.Why {
			fmt.Fprintf(w, "    why: %s\n", escapeControls(why))
		}
	}
	m := p.MemoryExists
	fmt.Fprintf(w, "\nselection: %d of %d candidates considered (limit %d); %d apply, %d rendered\n",
		p.Selection.Considered, p.Selection.TotalCandidates, p.Selection.CandidateLimit, m.Applies, m.Rendered)
	fmt.Fprintf(w, "memory here: %s (%d authoritative), %d evidence\n", plural(m.Cards, "card"), m.Authoritative, m.Evidence)
	if m.Reason != "" {
		fmt.Fprintf(w, "why empty: %s\n", m.Reason)
	}
	fmt.Fprintf(w, "budget: %d of %d characters", p.Budget.Used, p.Budget.Limit)
	if len(p.Selection.TrimmedDueToBudgetIDs) > 0 {
		fmt.Fprintf(w, "; trimmed %s", strings.Join(p.Selection.TrimmedDueToBudgetIDs, ", "))
	}
	fmt.Fprintln(w)
	if p.Budget.OverflowReason != "" {
		fmt.Fprintf(w, "over budget: %s\n", p.Budget.OverflowReason)
	}
	for i, d := range []policies.Decision{p.Policy.Scope, p.Policy.Lanes} {
		fmt.Fprintf(w, "policy palace.%s %s (%s)", []string{"scope", "lanes"}[i], shortHash(d.Hash), orDash(d.Engine))
		if d.Fallback != "" {
			fmt.Fprintf(w, " — %s", d.Fallback)
		}
		fmt.Fprintln(w)
	}
	if p.Policy.Fallback != "" {
		fmt.Fprintf(w, "policy set: %s\n", p.Policy.Fallback)
	}
	for _, s := range p.DistillSuggestions {
		fmt.Fprintf(w, "distill: field %s has %d evidence rows and no authoritative card: %s\n", s.Field, s.EvidenceCount, s.Command)
	}
}

func breakdownLine(b map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(b)) {
		if b[k] != 0 {
			parts = append(parts, fmt.Sprintf("%s %+d", k, b[k]))
		}
	}
	if len(parts) == 0 {
		return "all terms 0"
	}
	return strings.Join(parts, ", ")
}

// policyNotice tells the user on stderr, outside the pack an agent injects,
// that the policies did not load and the embedded defaults decided.
func policyNotice(stderr io.Writer, p pack.PackPolicy) {
	if p.Fallback != "" {
		fmt.Fprintf(stderr, "palace: notice: %s\n", p.Fallback)
	}
}

// runContextHook answers an agent's session or prompt hook: the payload on
// stdin names the event, the prompt (the query) and the session's
// directory (unless --cwd); stdout gets the agent's JSON with the rendered
// pack as added context.
//
// Every failure exits 1, never 2: Claude Code reads exit code 2 from a
// UserPromptSubmit hook, and Gemini CLI from BeforeAgent, as "block this
// prompt" and erase it, and a memory that cannot be read must not stop the
// user's work. The message goes to stderr, which the agent shows.
func runContextHook(cmd *cobra.Command, g *globals, agent string, req pack.ContextRequest) error {
	err := func() error {
		if err := checkBudget(req.Budget); err != nil {
			return err
		}
		p, err := agenthook.ReadPayload(agent, g.stdin)
		if err != nil {
			return err
		}
		req.Query, g.cwd = cmp.Or(req.Query, p.Prompt), cmp.Or(g.cwd, p.Cwd)
		return g.withHost(cmd, func(ctx context.Context, h *host.Host) error {
			pack, err := h.Pack().Context(ctx, req)
			if err != nil {
				return err
			}
			out, err := agenthook.Response(p, pack.Rendered)
			if err != nil {
				return err
			}
			_, err = g.stdout.Write(out)
			return err
		})
	}()
	if err == nil {
		return nil
	}
	fmt.Fprintf(g.stderr, "palace: %s\n", escapeControls(err.Error()))
	return exitError{1}
}

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

func newHintsCmd(g *globals) *cobra.Command {
	var language string
	cmd := &cobra.Command{
		Use:   "hints FILE...",
		Short: "Show where authoritative cards' trigger patterns match in files",
		Long: `Match the trigger patterns of the authoritative cards visible from here against
each FILE and print one line per match, as the editor's inlay hints and
diagnostics show them (the same implementation):

  path:line:col: kc_… ‹tier› statement

A card matches at most once per line; cards whose scope does not cover the
file are left out. Lines longer than 64 KiB are skipped.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, files []string) error {
			return g.withHost(cmd, func(ctx context.Context, h *host.Host) error {
				set, err := h.Pack().CompileTriggers(ctx, nil)
				if err != nil {
					return err
				}
				var all []pack.Hints
				for _, f := range files {
					text, err := limits.ReadInputFile("FILE", f, host.MaxHintsFileBytes)
					if err != nil {
						return err
					}
					res, err := h.Pack().Hints(ctx, set, pack.HintsRequest{File: f, Text: string(text), Language: language})
					if err != nil {
						return err
					}
					res.File = f
					all = append(all, res)
				}
				return g.output(map[string]any{"files": all}, func(w io.Writer) {
					for _, res := range all {
						for _, m := range res.Matches {
							fmt.Fprintf(w, "%s:%d:%d: %s %s\n", escapeControls(res.File), m.Line, m.Col, m.Card.ID, escapeControls(m.Card.Label()))
						}
					}
					for _, inv := range set.Invalid() {
						fmt.Fprintf(g.stderr, "palace: card %s: %s\n", inv.CardID, escapeControls(inv.Error))
					}
				})
			})
		},
	}
	cmd.Flags().StringVar(&language, "language", "", "editor language id for the scope policy (default: from each file's extension)")
	return cmd
}
