package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/research"
)

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
		b, err = io.ReadAll(host.LimitInput("stdin", g.stdin, research.MaxReportBytes))
	} else {
		b, err = host.ReadInputFile("FILE", file, research.MaxReportBytes)
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
