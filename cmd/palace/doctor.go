package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	opaversion "github.com/open-policy-agent/opa/v1/version"
	"github.com/spf13/cobra"

	"github.com/palacehq/palace/host"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = ""

func palaceVersion() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		// go install …@vX.Y.Z, or a build in a checkout (a pseudo-version).
		return bi.Main.Version
	}
	// A build without module version still names its commit.
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if rev != "" {
		return "devel-" + shortHash(rev) + dirty
	}
	return "dev"
}

func newVersionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print palace's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := map[string]any{
				"version":        palaceVersion(),
				"schema_version": host.SchemaVersion,
				"go":             runtime.Version(),
				"opa":            opaversion.Version,
				"platform":       runtime.GOOS + "/" + runtime.GOARCH,
			}
			return g.output(v, func(w io.Writer) {
				fmt.Fprintf(w, "palace %s (schema v%d, OPA %s, %s, %s)\n", v["version"], host.SchemaVersion, opaversion.Version, runtime.Version(), v["platform"])
			})
		},
	}
}

func newDoctorCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check the palace home, database, schema, anchors and policies",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := g.hostOptions()
			if err != nil {
				return err
			}
			r := host.Doctor(cmd.Context(), opts)
			return g.verdict(r, func(w io.Writer) {
				p := newPainter(w)
				fmt.Fprintf(w, "palace %s · home %s · mode %s\n", palaceVersion(), r.Home, r.Mode)
				marks := map[string]string{"ok": p.paint("32", "ok  "), "warn": p.paint("33", "warn"), "fail": p.paint("1;31", "FAIL")}
				// One column for the details, however long a check's name.
				width := 0
				for _, c := range r.Checks {
					width = max(width, len(c.Name))
				}
				for _, c := range r.Checks {
					fmt.Fprintf(w, "  %s %-*s  %s\n", marks[c.Status], width, c.Name, c.Detail)
					if c.Fix != "" {
						fmt.Fprintf(w, "       %*s  %s\n", width, "", p.dim("fix: "+c.Fix))
					}
				}
			}, r.OK())
		},
	}
}

func newMaintenanceCmd(g *globals) *cobra.Command {
	var vacuum bool
	var days int
	cmd := &cobra.Command{
		Use:   "maintenance",
		Short: "Drop old raw telemetry and compact the database",
		Long: `Compact the palace on demand. Raw context-request telemetry older than the
retention window (--keep-days, else $PALACE_TELEMETRY_DAYS, else 30 days) is
dropped: the per-card per-day counts that cooling and the audit read are kept,
only the per-request record of which card got which outcome goes. Then the
write-ahead log is checkpointed and truncated, and the file is rebuilt (VACUUM)
when --vacuum is given or more than a quarter of it is free pages; a rebuild
needs free disk space about the file's size and makes other writers wait
until it ends. Cards, evidence, links and card events are never touched.
Context requests drop old records themselves as they go; this command is for
giving the space back to the filesystem. Human mode only.`,
		Example: `  palace maintenance
  palace maintenance --keep-days 7 --vacuum`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if days < 0 {
				return usageError{fmt.Sprintf("--keep-days %d is negative: pass a number of days ≥ 1", days)}
			}
			return showing(g, func(ctx context.Context, h *host.Host, _ []string) (host.MaintenanceReport, error) {
				return h.Maintenance(ctx, days, vacuum)
			}, func(w io.Writer, r host.MaintenanceReport) {
				fmt.Fprintf(w, "dropped %d request records older than %d days", r.Pruned, r.KeepDays)
				if r.Vacuumed {
					fmt.Fprint(w, "; rebuilt the file")
				}
				fmt.Fprintf(w, "\ndatabase %.1f MB → %.1f MB (free %.1f MB, WAL %.1f MB); %d request records kept, %d daily rollup rows\n",
					float64(r.Before.FileBytes+r.Before.WALBytes)/(1<<20), float64(r.After.FileBytes+r.After.WALBytes)/(1<<20),
					float64(r.After.FreeBytes)/(1<<20), float64(r.After.WALBytes)/(1<<20), r.After.Requests, r.After.DailyRows)
			})(cmd, nil)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&vacuum, "vacuum", false, "rebuild the file even when little of it is free")
	f.IntVar(&days, "keep-days", 0, "days of raw request telemetry to keep (default $PALACE_TELEMETRY_DAYS, else 30)")
	return cmd
}

func newWorkspaceCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "workspace show|allow-all-repos|deny-all-repos",
		Short: "What agents may read from this checkout: other repositories' memory only where a person allowed it",
		Long: `A workspace is one checkout. In agent mode palace never reads another
repository's cards or evidence (all_repos in MCP, --all-repos on the CLI) unless a
person allowed it for that workspace: allow-all-repos and deny-all-repos record the
decision (human mode only, exit 3 in agent mode) with who took it, when and why,
append-only; the newest one is in force, and palace doctor shows it. Outside a git
checkout there is no workspace to allow (exit 2). A person in human mode always
reads what they ask for.`,
	}
	show := &cobra.Command{
		Use:   "show",
		Short: "Show what agents may read from this checkout (read-only)",
		Args:  cobra.NoArgs,
		RunE: showing(g, func(ctx context.Context, h *host.Host, _ []string) (host.WorkspaceAccess, error) {
			return h.WorkspaceAccess(ctx)
		}, printWorkspace),
	}
	set := func(allowed bool, use, short string) *cobra.Command {
		var reason string
		c := &cobra.Command{
			Use:   use + " [--reason R]",
			Short: short,
			Args:  cobra.NoArgs,
			RunE: showing(g, func(ctx context.Context, h *host.Host, _ []string) (host.WorkspaceAccess, error) {
				return h.SetAllRepos(ctx, allowed, reason)
			}, printWorkspace),
		}
		c.Flags().StringVar(&reason, "reason", "", "why, in a sentence (kept with the decision)")
		return c
	}
	cmd.AddCommand(show,
		set(true, "allow-all-repos", "Let agents read every repository's memory from this checkout (human mode)"),
		set(false, "deny-all-repos", "Stop agents reading other repositories' memory from this checkout (human mode)"))
	return cmd
}

func printWorkspace(w io.Writer, acc host.WorkspaceAccess) {
	if acc.Workspace == "" {
		fmt.Fprintf(w, "outside a git checkout: agents read this palace's global memory only\n  %s\n", acc.How)
		return
	}
	state := "agents read this checkout's worktree, repository and global memory only"
	if acc.AllRepos {
		state = "agents may read every repository's memory from here (all_repos, --all-repos)"
	}
	fmt.Fprintf(w, "workspace %s: %s\n", escapeControls(acc.Workspace), state)
	if d := acc.Decision; d != nil {
		verb := "denied"
		if d.Allowed {
			verb = "allowed"
		}
		fmt.Fprintf(w, "  %s by %s at %s", verb, escapeControls(d.Actor), d.CreatedAt)
		if d.Reason != "" {
			fmt.Fprintf(w, ": %s", escapeControls(d.Reason))
		}
		fmt.Fprintln(w)
	} else {
		fmt.Fprintln(w, "  no one decided (agents may not)")
	}
	fmt.Fprintf(w, "  %s\n", acc.How)
}
