package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/palacehq/palace/benchgen"
	"github.com/palacehq/palace/host"
)

func newBenchCmd(g *globals) *cobra.Command {
	// For palace's developers (benchmark data), not its users.
	cmd := &cobra.Command{Use: "bench", Short: "Benchmark helpers", Hidden: true}
	cmd.AddCommand(newBenchGenCmd(g))
	return cmd
}

func newBenchGenCmd(g *globals) *cobra.Command {
	spec := benchgen.Spec10k
	var large, year bool
	var requests, days int
	cmd := &cobra.Command{
		Use:   "gen",
		Short: "Fill an empty palace with a realistic synthetic one (10k cards by default)",
		Long: `Generate a synthetic palace for benchmarks into an empty --home: anchors for
--repos repositories and --worktrees worktrees (the current checkout is
repository 0, worktree 0), evidence, cards of every tier, status, persistence
and scope, links, and 30 days of injection events. Deterministic for --seed.
--large generates 100k cards and 1M evidence. --year adds a year of context
requests (200k over 365 days, or --requests over --days), shaped like real
packs of repository 0 and kept with the default telemetry retention (raw
records of the last 30 days, per-card per-day counts for all of it). Progress
goes to stderr on a terminal. Human mode only; refuses a palace that holds anything.`,
		Example: `  palace bench gen --home /tmp/bench-home
  palace --home /tmp/big bench gen --large
  palace --home /tmp/year bench gen --year`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if large {
				big := benchgen.Spec100k
				big.Seed = spec.Seed
				spec = big
			}
			if year && requests == 0 {
				requests = spec.WithYear().Requests
			}
			if requests < 0 || requests > 0 && days < 1 {
				return usageError{fmt.Sprintf("--requests %d over --days %d: pass a count ≥ 0 and at least one day", requests, days)}
			}
			if requests > 0 {
				spec.Requests, spec.Days = requests, days
			}
			return showing(g, func(ctx context.Context, h *host.Host, _ []string) (benchgen.Stats, error) {
				var progress func(benchgen.Progress)
				if isTTY(g.stderr) {
					last := time.Time{}
					progress = func(p benchgen.Progress) {
						if p.Done == p.Total || time.Since(last) > 200*time.Millisecond {
							last = time.Now()
							fmt.Fprintf(g.stderr, "\r%-18s %3d%% (%d/%d)", p.Stage, p.Done*100/max(1, p.Total), p.Done, p.Total)
							if p.Done == p.Total {
								fmt.Fprintln(g.stderr)
							}
						}
					}
				}
				return benchgen.Generate(ctx, h, spec, progress)
			}, func(w io.Writer, st benchgen.Stats) {
				fmt.Fprintf(w, "generated %d cards, %d evidence, %d links, %d injection events over %d anchors in %s\n",
					st.Cards, st.Evidence, st.Links, st.Events, st.Anchors, st.Elapsed)
				if st.Requests > 0 {
					fmt.Fprintf(w, "and %d context requests over %d days (%d raw records dropped by the retention)\n", st.Requests, spec.Days, st.Pruned)
				}
				fmt.Fprintf(w, "repository 0 is %s, worktree 0 is %s\n", st.Repo, st.Worktree)
			})(cmd, nil)
		},
	}
	f := cmd.Flags()
	f.IntVar(&spec.Cards, "cards", spec.Cards, "cards")
	f.IntVar(&spec.Evidence, "evidence", spec.Evidence, "evidence rows")
	f.IntVar(&spec.Links, "links", spec.Links, "card-evidence links (about)")
	f.IntVar(&spec.Repos, "repos", spec.Repos, "repositories")
	f.IntVar(&spec.Worktrees, "worktrees", spec.Worktrees, "worktrees (spread over the repositories)")
	f.IntVar(&spec.Events, "events", spec.Events, "injection events of the last 30 days")
	f.IntVar(&requests, "requests", 0, "context requests of history to write (0 = none; --year: 200000)")
	f.IntVar(&days, "days", 365, "days the history spans")
	f.BoolVar(&year, "year", false, "add a year of context requests (200k over 365 days)")
	f.Int64Var(&spec.Seed, "seed", spec.Seed, "random seed")
	f.BoolVar(&large, "large", false, "100k cards and 1M evidence (other size flags are ignored)")
	return cmd
}
