package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/lsp"
	palacemcp "github.com/palacehq/palace/mcp"
	"github.com/palacehq/palace/ui"
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
			// A log to stderr at --log-level, or none.
			logger := slog.New(slog.DiscardHandler)
			if logLevel != "" {
				var l slog.Level
				if err := l.UnmarshalText([]byte(logLevel)); err != nil {
					return usageError{fmt.Sprintf("--log-level %q is not valid: use debug, info, warn or error", logLevel)}
				}
				logger = slog.New(slog.NewTextHandler(g.stderr, &slog.HandlerOptions{Level: l}))
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

func newLSPCmd(g *globals) *cobra.Command {
	var logFile string
	cmd := &cobra.Command{
		Use:   "lsp",
		Short: "Serve palace to editors over LSP (stdio, human mode by default)",
		Long: `Speak the Language Server Protocol (3.18) on stdin/stdout so an editor shows
governed knowledge next to the code it applies to: hover, a code lens with the
cards that apply to the file, inlay hints and diagnostics where a card's trigger
pattern matches, mailbox check findings in boxes, policy compile errors, and the
palace/context and palace/brief requests. The mode is fixed at start: human
unless --mode agent or PALACE_MODE=agent; agent mode offers no promote/demote.

The palace home is --home, else PALACE_HOME, else ~/.palace: the user's. A
"home" in the client's settings is ignored with a warning, since a
repository can ship editor settings (.vscode/settings.json); editors pass a
user-level home as --home (the VS Code extension does so for palace.home).

The server watches .palace/ and the policy folders and notices changes other
processes make to the database, without a restart. stdout carries JSON-RPC
only; logs go to stderr, or to --log-file. Exit status is 0 after shutdown and
exit, 1 when the client exits without shutdown.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			mode, err := host.ResolveMode(g.mode, os.Getenv(host.ModeEnv), host.Human)
			if err != nil {
				return err
			}
			logw := g.stderr
			if logFile != "" {
				f, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
				if err != nil {
					return usageError{fmt.Sprintf("--log-file %s: %v: pass a writable path", logFile, err)}
				}
				defer f.Close()
				logw = f
			}
			if _, set := os.LookupEnv("GOGC"); !set {
				debug.SetGCPercent(lsp.GCPercent)
			}
			srv := lsp.New(lsp.Options{Mode: mode, Home: g.home, Log: logw, Version: palaceVersion()})
			err = srv.Serve(cmd.Context(), stdioConn{pollableStdin(g.stdin), g.stdout})
			switch {
			case err == nil:
				return nil
			case errors.Is(err, lsp.ErrExitWithoutShutdown):
				return exitError{1}
			case errors.Is(err, context.Canceled):
				fmt.Fprintln(g.stderr, "palace lsp: interrupted")
				return exitError{1}
			}
			return err
		},
	}
	cmd.Flags().StringVar(&logFile, "log-file", "", "append the server's log to this file instead of stderr")
	cmd.Flags().Bool("stdio", true, "serve on stdin/stdout (the only transport; accepted for clients that pass it)")
	return cmd
}

// stdioConn joins stdin and stdout into the stream the server reads and
// writes. Close closes stdin when it can, which ends a blocked read.
type stdioConn struct {
	io.Reader
	io.Writer
}

func (c stdioConn) Close() error {
	if rc, ok := c.Reader.(io.Closer); ok {
		return rc.Close()
	}
	return nil
}

func newUICmd(g *globals) *cobra.Command {
	var addr string
	var open bool
	cmd := &cobra.Command{
		Use:   "ui",
		Short: "Serve the reviewer's desk: a local web page of the queue, the gate and the packs",
		Long: `Serve palace's reviewer's desk on a local web page: the candidate queue with
each card's evidence, the gate's answer and near-duplicates, with promote,
reject, link and rescope (human mode, through the same gate as the CLI); what
needs attention (contested cards, audit findings, expiring candidates, cards
held back by sync, sync conflicts as a diff); a pack inspector that shows the
pack an agent would get and why each card is in or out; card pages with their
history, adoption signals and packs; and the mailbox. Pages follow changes
other processes make within a second.

It listens on loopback (127.0.0.1, a free port) unless --addr says otherwise,
and prints the URL to open: it carries a random token, traded on the first
visit for a cookie. Requests naming another host or origin are refused, and
every change is a POST with a CSRF token. --mode agent serves read-only pages.
The URL is also written to $PALACE_HOME/ui.json (readable by you only) so the
editor's palace.openCard command finds it. Ctrl-C stops the server.`,
		Example: `  palace ui --open
  palace ui --addr 127.0.0.1:7070
  palace ui --mode agent        # read-only`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, _, err := net.SplitHostPort(addr); err != nil {
				return usageError{fmt.Sprintf("--addr %q is not host:port: pass e.g. 127.0.0.1:7070", addr)}
			}
			if !ui.IsLoopback(addr) {
				fmt.Fprintf(g.stderr, "palace ui: warning: --addr %s is not loopback: anyone who can reach it and learns the URL acts as you on this palace\n", addr)
			}
			return g.withHost(cmd, func(ctx context.Context, h *host.Host) error {
				ln, err := net.Listen("tcp", addr)
				if err != nil {
					return usageError{fmt.Sprintf("--addr %s: %v: pass a free address", addr, err)}
				}
				defer ln.Close()
				srv, err := ui.New(ctx, h, ln.Addr(), ui.Options{Version: palaceVersion(),
					Logger: slog.New(slog.NewTextHandler(g.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
				if err != nil {
					return err
				}
				defer srv.Close()
				url := srv.URL("/")
				remove, err := srv.WriteRunFile(h.Home())
				if err != nil {
					fmt.Fprintf(g.stderr, "palace ui: warning: %v (the editor's palace.openCard will not find this server)\n", err)
				}
				defer remove()
				if err := g.output(map[string]string{"url": url, "mode": string(h.Mode())}, func(w io.Writer) {
					fmt.Fprintf(w, "palace ui (%s mode) for %s\n  %s\nCtrl-C stops it.\n", h.Mode(), orDash(h.Location().Worktree), url)
				}); err != nil {
					return err
				}
				if open {
					if err := openBrowser(url); err != nil {
						fmt.Fprintf(g.stderr, "palace ui: could not open a browser (%v): open the URL above\n", err)
					}
				}
				err = srv.Serve(ctx, ln)
				if ctx.Err() != nil {
					fmt.Fprintln(g.stderr, "palace ui: stopped")
					return nil
				}
				return err
			})
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:0", "listen address (host:port; port 0 picks a free one); a non-loopback address is warned about")
	cmd.Flags().BoolVar(&open, "open", false, "open the desk in the default browser")
	return cmd
}

// openBrowser opens url in the default browser.
func openBrowser(url string) error {
	var c *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		c = exec.Command("open", url)
	case "windows":
		c = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		c = exec.Command("xdg-open", url)
	}
	if err := c.Start(); err != nil {
		return err
	}
	go func() { _ = c.Wait() }()
	return nil
}
