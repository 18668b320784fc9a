package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/lsp"
)

func newLSPCmd(g *globals) *cobra.Command {
	var logFile string
	var stdio bool
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
			err = srv.Serve(cmd.Context(), stdioConn{r: pollableStdin(g.stdin), w: g.stdout})
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
	cmd.Flags().BoolVar(&stdio, "stdio", true, "serve on stdin/stdout (the only transport; accepted for clients that pass it)")
	return cmd
}

// stdioConn joins stdin and stdout into the stream the server reads and
// writes. Close closes stdin when it can, which ends a blocked read.
type stdioConn struct {
	r io.Reader
	w io.Writer
}

func (c stdioConn) Read(p []byte) (int, error)  { return c.r.Read(p) }
func (c stdioConn) Write(p []byte) (int, error) { return c.w.Write(p) }
func (c stdioConn) Close() error {
	if rc, ok := c.r.(io.Closer); ok {
		return rc.Close()
	}
	return nil
}
