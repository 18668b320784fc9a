package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os/exec"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/ui"
)

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
	if c.Process == nil {
		return errors.New("no browser started")
	}
	return nil
}
