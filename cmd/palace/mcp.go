package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/palacehq/palace/host"
	palacemcp "github.com/palacehq/palace/mcp"
)

func init() { extraCommands = append(extraCommands, newMCPCmd) }

func newMCPCmd(g *globals) *cobra.Command {
	var logLevel string
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve palace to agents over MCP (stdio, agent mode by default)",
		Long: `Serve the Model Context Protocol on stdin/stdout for coding agents (Claude Code,
Codex, Cursor, VS Code). The mode is fixed at start: agent unless --mode human
is given, and PALACE_MODE=agent cannot be raised. In agent mode the human-only
tools (promote, demote, retire, publish, audit_action) are not offered.

stdout carries JSON-RPC only; with --log-level the server logs to stderr, and
its first line names the palace home, the worktree and the repository served.
A client that does not pass its environment on must set PALACE_HOME in its
server configuration (see mcp/README.md).
The server ends cleanly when stdin closes or on the first SIGINT.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			logger, err := mcpLogger(g.stderr, logLevel)
			if err != nil {
				return err
			}
			g.defaultMode = host.Agent
			g.deferCreate = true
			return g.withHost(cmd, func(ctx context.Context, h *host.Host) error {
				// The first line says what is served: a client that does not
				// pass PALACE_HOME through shows here which home it got.
				loc := h.Location()
				logger.Info("palace mcp serving", "home", h.Home(), "worktree", orDash(loc.Worktree),
					"repo", orDash(loc.RepoIdentity), "mode", h.Mode(), "actor", h.Actor())
				ctx, cancel := context.WithCancel(ctx)
				defer cancel()
				stopWatch := watchPolicies(ctx, h, logger)
				defer stopWatch()
				srv := palacemcp.New(h, palacemcp.Options{Version: palaceVersion(), Logger: logger})
				return srv.Run(ctx, g.stdin, g.stdout)
			})
		},
	}
	cmd.Flags().StringVar(&logLevel, "log-level", "", "log to stderr at this level: debug, info, warn or error (default: no log)")
	return cmd
}

// watchPolicies keeps h's policy set current while the server runs
// (a long-running process swaps in edited policies without a
// restart). The returned stop cancels the watcher and waits for its
// goroutine. A watcher that cannot start is logged, not fatal: the server
// then serves the set it loads on first use, as the CLI does.
func watchPolicies(ctx context.Context, h *host.Host, logger *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	w, err := h.WatchPolicies(ctx, func(set *host.PolicySet, err error) {
		switch {
		case err != nil && set == nil:
			logger.Warn("policy reload failed and a file of the last good set is gone; gate and mailbox fail closed, scope and lanes use the embedded defaults", "error", err)
		case err != nil:
			logger.Warn("policy reload failed; the last good set keeps serving", "error", err)
		case set != nil:
			logger.Info("policies loaded", "hash", set.Hash())
		}
	})
	if err != nil {
		cancel()
		logger.Warn("policies are not watched; edits apply after a restart", "error", err)
		return func() {}
	}
	return func() {
		cancel()
		<-w.Done()
	}
}

// mcpLogger logs to stderr at level, or nowhere when level is empty.
func mcpLogger(stderr io.Writer, level string) (*slog.Logger, error) {
	if level == "" {
		return slog.New(slog.DiscardHandler), nil
	}
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, usageError{fmt.Sprintf("--log-level %q is not valid: use debug, info, warn or error", level)}
	}
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: l})), nil
}
