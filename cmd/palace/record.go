package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/intake"
	"github.com/palacehq/palace/host/research"
	"github.com/palacehq/palace/internal/limits"
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
					b, err := limits.ReadInputFile("--file", file, intake.MaxContentBytes)
					if err != nil {
						return err
					}
					req.Content = string(b)
					req.SourceRef = cmp.Or(req.SourceRef, file)
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
	r := limits.LimitInput("--jsonl", g.stdin, host.MaxJSONLBytes)
	name := "stdin"
	if path != "-" {
		f, err := limits.OpenInputFile("--jsonl", path, host.MaxJSONLBytes)
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

const researchContract = `A report is one JSON object:

  {"report_id": "rr-2026-11-ssr", "title": "…", "about": "project",
   "sources":  [{"id": "s1", "url": "https://…", "title": "…"}],
   "findings": [{"id": "f1", "content": "…", "source": "s1", "field": "…"}],
   "candidate_insights": [{"statement": "…", "tier": "shu", "field": "…", "findings": ["f1"]}]}

A finding's source is a source id or a URL/path; about is project (the default)
or general. Bad input exits 2 naming the JSON path (findings[3].source) and
writes nothing.`

func newResearchCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "research validate|ingest FILE",
		Short: "Validate a research report, or ingest its findings as evidence (evidence-first: never cards)",
		Long: `Research enters palace as evidence only: one evidence row per finding,
provenance research, source_ref the source's URL or path, with a stable id
made from the report and finding ids, so ingesting a report again writes
nothing. Candidate insights become distill suggestions citing the planned
evidence ids; nothing is distilled or promoted.

` + researchContract,
	}
	validate := &cobra.Command{
		Use:   "validate FILE",
		Short: "Check a report against the contract (read-only); - reads stdin",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.research(cmd, args[0], "validate", "")
		},
	}
	var dryRun bool
	var anchor string
	ingest := &cobra.Command{
		Use:   "ingest FILE [--dry-run] [--anchor repo|worktree|global]",
		Short: "Write one evidence row per finding (new ones only); --dry-run plans and writes nothing",
		Long: `Ingest a report's findings as research evidence at the repo anchor (or
--anchor; global only for a report whose about is general). A second ingest of
the same report writes 0 rows and says so. The palace.research policy decides
who may write: its embedded default lets a person ingest and an agent only
plan (--dry-run); a refused ingest exits 3.

` + researchContract,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			action := "ingest"
			if dryRun {
				action = "plan"
			}
			return g.research(cmd, args[0], action, anchor)
		},
	}
	ingest.Flags().BoolVar(&dryRun, "dry-run", false, "plan the ingest and write nothing")
	ingest.Flags().StringVar(&anchor, "anchor", "", "repo (default), worktree or global")
	cmd.AddCommand(validate, ingest)
	return cmd
}

func (g *globals) research(cmd *cobra.Command, file, action, anchor string) error {
	var b []byte
	var err error
	if file == "-" {
		b, err = io.ReadAll(limits.LimitInput("stdin", g.stdin, research.MaxReportBytes))
	} else {
		b, err = limits.ReadInputFile("FILE", file, research.MaxReportBytes)
	}
	if err != nil {
		return err
	}
	return showing(g, func(ctx context.Context, h *host.Host, _ []string) (research.Plan, error) {
		return h.Research(ctx, research.Request{Report: b, Name: file, Action: action, Anchor: anchor})
	}, printResearch)(cmd, nil)
}

func printResearch(w io.Writer, p research.Plan) {
	pt := newPainter(w)
	fmt.Fprintf(w, "%s\n", escapeControls(p.Message))
	fmt.Fprintf(w, "  report %s: %s\n  %d sources, %d findings → research evidence at the %s anchor\n", p.ReportID, escapeControls(p.Title), p.Sources, p.Findings, p.Anchor)
	shown := 0
	for _, e := range p.Evidence {
		if shown == 5 {
			fmt.Fprintf(w, "  %s\n", pt.dim(fmt.Sprintf("… and %d more (--format json lists them all)", len(p.Evidence)-shown)))
			break
		}
		state := "new"
		if e.Exists {
			state = "exists"
		}
		src := escapeControls(e.SourceRef)
		if e.DuplicateOf != "" {
			src += " · repeats " + e.DuplicateOf
		}
		fmt.Fprintf(w, "  %s  %-6s %s  %s\n", e.ID, state, escapeControls(e.FindingID), pt.dim(src))
		shown++
	}
	if len(p.Suggestions) > 0 {
		fmt.Fprintln(w, "\ncandidate insights (suggestions only: a person or agent distills, a human promotes):")
		for _, s := range p.Suggestions {
			fmt.Fprintf(w, "  %s\n", escapeControls(s.Command))
			if s.Note != "" {
				fmt.Fprintf(w, "    %s\n", pt.dim(s.Note))
			}
			printNear(w, "    ", s.NearDuplicates)
		}
	}
}
