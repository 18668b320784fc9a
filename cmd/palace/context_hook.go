package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/agenthook"
	"github.com/palacehq/palace/host/pack"
)

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
		if req.Query == "" {
			req.Query = p.Prompt
		}
		if g.cwd == "" {
			g.cwd = p.Cwd
		}
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
