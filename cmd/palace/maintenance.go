package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/palacehq/palace/host"
)

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
