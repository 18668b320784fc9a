package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/pack"
)

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
					text, err := host.ReadInputFile("FILE", f, host.MaxHintsFileBytes)
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
