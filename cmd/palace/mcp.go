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
The server ends cleanly when stdin closes, once it has answered every request
it read, or on the first SIGINT.`,
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
				srv := palacemcp.New(h, palacemcp.Options{Version: palaceVersion(), Logger: logger})
				return srv.Run(ctx, g.stdin, g.stdout)
			})
		},
	}
	cmd.Flags().StringVar(&logLevel, "log-level", "", "log to stderr at this level: debug, info, warn or error (default: no log)")
	return cmd
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
