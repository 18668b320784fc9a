package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/pack"
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
	for _, d := range []struct {
		name string
		hash string
		eng  string
		fb   string
	}{
		{"palace.scope", p.Policy.Scope.Hash, p.Policy.Scope.Engine, p.Policy.Scope.Fallback},
		{"palace.lanes", p.Policy.Lanes.Hash, p.Policy.Lanes.Engine, p.Policy.Lanes.Fallback},
	} {
		fmt.Fprintf(w, "policy %s %s (%s)", d.name, shortHash(d.hash), orDash(d.eng))
		if d.fb != "" {
			fmt.Fprintf(w, " — %s", d.fb)
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
	keys := make([]string, 0, len(b))
	for k := range b {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
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
