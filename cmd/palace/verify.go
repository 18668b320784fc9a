package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/palacehq/palace/host"
)

func newVerifyCmd(g *globals) *cobra.Command {
	var req host.VerifyRequest
	cmd := &cobra.Command{
		Use:   "verify ID [--evidence EV]…",
		Short: "Verify a card against the code as it is now (records a verification; never promotes)",
		Long: `Look at the code card ID is checked against — the places its newest
code-citing verification saw, or, with none, its supporting evidence —
where it is now (moved lines and files git saw renamed are followed), record
what it holds as one verification evidence row and link it to the card. A
stale card is fresh again. A verification is evidence: the card's status
does not change. Both modes.

--evidence EV verifies against the code EV cites instead: one citation of
the card, or evidence recorded where the code moved to (palace record
--source-ref PATH#L10-L24 …).

Exit 0 when the verification is recorded (or was on record for this very
code), 1 when code the card cites is gone (a deleted file, lines past the
end of a file, a symbol no longer defined: point it at the code's new place
with --evidence, or demote it), 2 for bad input (an unknown card, a card or
evidence citing no file of this checkout, outside git).`,
		Args: cobra.ExactArgs(1),
		RunE: showing(g, func(ctx context.Context, h *host.Host, args []string) (host.VerifyResult, error) {
			return h.Verify(ctx, args[0], req)
		}, printVerify),
	}
	f := cmd.Flags()
	listFlag(f, &req.Evidence, "evidence", "verify against the code this evidence cites")
	f.StringVar(&req.Note, "note", "", "what was checked, added to the verification")
	return cmd
}

func printVerify(w io.Writer, res host.VerifyResult) {
	p := newPainter(w)
	switch {
	case res.Linked:
		fmt.Fprintf(w, "verified %s: recorded %s as its verification\n", res.Card.ID, res.Evidence.ID)
	default:
		fmt.Fprintf(w, "verified %s: %s is its verification of this code already\n", res.Card.ID, res.Evidence.ID)
	}
	for _, c := range res.Checked {
		line := fmt.Sprintf("  %s  %s", c.State, escapeControls(c.Now))
		if c.Detail != "" {
			line += " (" + escapeControls(c.Detail) + " since " + c.EvidenceID + " saw it)"
		} else if c.SourceRef != c.Now {
			line += " (cited as " + escapeControls(c.SourceRef) + ")"
		}
		fmt.Fprintln(w, line)
	}
	switch {
	case res.Card.Stale != nil:
		fmt.Fprintf(w, "  %s\n", p.paint("33", "still stale: "+escapeControls(res.Card.Stale.Reason)))
	case res.WasStale:
		fmt.Fprintf(w, "  %s\n", p.dim("it was stale; it is fresh now"))
	}
}
