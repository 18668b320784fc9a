package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/intake"
)

func newInitCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "init",
		Short: "Create the palace home and database (idempotent)",
		Args:  cobra.NoArgs,
		RunE: showing(g, func(ctx context.Context, h *host.Host, _ []string) (host.InitResult, error) {
			return h.Init(ctx)
		}, func(w io.Writer, res host.InitResult) {
			fmt.Fprintf(w, "palace home   %s\ndatabase      %s (schema v%d)\npolicies      %s\n", res.Home, res.Database, res.SchemaVersion, res.PolicyDir)
			if res.Anchor.Kind != "" {
				fmt.Fprintf(w, "anchor here   %s %s\n", res.Anchor.Kind, res.Anchor.Identity)
			}
		}),
	}
}

func newRecordCmd(g *globals) *cobra.Command {
	var req intake.RecordRequest
	var file, jsonl string
	cmd := &cobra.Command{
		Use:   "record [-]",
		Short: "Record raw evidence (append-only)",
		Long: `Record one piece of evidence from --content, --file or stdin ("-"), or import
many from a JSON Lines file with --jsonl (one {"content": …, "field": …} object
per line; every line is validated before anything is written).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			stdin := len(args) == 1 && args[0] == "-"
			if len(args) == 1 && !stdin {
				return usageError{fmt.Sprintf("unexpected argument %q: pass text with --content, or - to read stdin", args[0])}
			}
			sources := 0
			for _, set := range []bool{cmd.Flags().Changed("content"), file != "", jsonl != "", stdin} {
				if set {
					sources++
				}
			}
			if sources != 1 {
				return usageError{"give exactly one of --content TEXT, --file PATH, --jsonl PATH or - (stdin)"}
			}
			return g.withHost(cmd, func(ctx context.Context, h *host.Host) error {
				if jsonl != "" {
					return g.recordBatch(ctx, h, jsonl, req)
				}
				switch {
				case file != "":
					b, err := host.ReadInputFile("--file", file, intake.MaxContentBytes)
					if err != nil {
						return err
					}
					req.Content = string(b)
					if req.SourceRef == "" {
						req.SourceRef = file
					}
				case stdin:
					b, err := io.ReadAll(io.LimitReader(g.stdin, intake.MaxContentBytes+1))
					if err != nil {
						return &host.Error{Kind: host.KindInvalid, Field: "content", Msg: "read stdin", Err: err}
					}
					req.Content = string(b)
				}
				ev, err := h.Intake().Record(ctx, req)
				if err != nil {
					return err
				}
				return g.output(ev, func(w io.Writer) {
					switch {
					case ev.Existing:
						fmt.Fprintf(w, "already recorded as %s  %s anchor · field %s · %s (same content; nothing written — --allow-duplicate records a repeat that never counts twice)\n", ev.ID, ev.Anchor.Kind, ev.Field, ev.Provenance)
					case ev.DuplicateOf != "":
						fmt.Fprintf(w, "recorded %s  %s anchor · field %s · %s · duplicate of %s (counted once)\n", ev.ID, ev.Anchor.Kind, ev.Field, ev.Provenance, ev.DuplicateOf)
					default:
						fmt.Fprintf(w, "recorded %s  %s anchor · field %s · %s\n", ev.ID, ev.Anchor.Kind, ev.Field, ev.Provenance)
					}
				})
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&req.Content, "content", "", "the evidence text")
	f.StringVar(&file, "file", "", "read the evidence text from a file (source_ref defaults to the path)")
	f.StringVar(&jsonl, "jsonl", "", "import JSON Lines from a file (- for stdin)")
	f.StringVar(&req.Field, "field", "", "field (default general)")
	f.StringVar(&req.Domain, "domain", "", "project, agent, skill or global")
	f.StringVar(&req.Provenance, "provenance", "", "runtime, research or human (default: human in human mode, runtime in agent mode; human is refused in agent mode)")
	f.StringVar(&req.SourceRef, "source-ref", "", "where the evidence came from (file:line, URL, command)")
	listFlag(f, &req.Tags, "tag", "tag")
	f.StringVar(&req.Anchor, "anchor", "", "worktree, repo or global (default: worktree, repo for research evidence; outside git, global must be given)")
	f.BoolVar(&req.AllowDuplicate, "allow-duplicate", false, "record a repeat of content already on record here (marked a duplicate, never counted twice)")
	return cmd
}

func (g *globals) recordBatch(ctx context.Context, h *host.Host, path string, defaults intake.RecordRequest) error {
	r := host.LimitInput("--jsonl", g.stdin, host.MaxJSONLBytes)
	name := "stdin"
	if path != "-" {
		f, err := host.OpenInputFile("--jsonl", path, host.MaxJSONLBytes)
		if err != nil {
			return err
		}
		defer f.Close()
		r, name = f, path
	}
	var progress intake.Progress
	if isTTY(g.stderr) && !g.json() {
		progress = func(done, total int) { drawProgress(g.stderr, done, total) }
	}
	res, err := h.Intake().RecordBatch(ctx, r, name, defaults, progress)
	if progress != nil && res.Imported > 0 {
		fmt.Fprintln(g.stderr)
	}
	if err != nil {
		return err
	}
	return g.output(res, func(w io.Writer) {
		fmt.Fprintf(w, "imported %s in %s", plural(res.Imported, "evidence row"), plural(res.Batches, "batch"))
		if res.Imported > 0 {
			fmt.Fprintf(w, " (%s … %s)", res.FirstID, res.LastID)
		}
		if res.Existing > 0 {
			fmt.Fprintf(w, "; %s already on record, not written again", plural(res.Existing, "line"))
		}
		fmt.Fprintln(w)
	})
}

// drawProgress redraws a one-line progress bar on a terminal.
func drawProgress(w io.Writer, done, total int) {
	const width = 30
	filled := width
	pct := 100
	if total > 0 {
		filled, pct = done*width/total, done*100/total
	}
	fmt.Fprintf(w, "\r[%s%s] %3d%% %d/%d rows", strings.Repeat("█", filled), strings.Repeat("░", width-filled), pct, done, total)
}
