package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/palacehq/palace/host"
)

// globals are the flags every command takes (DESIGN §9).
type globals struct {
	format string
	home   string
	cwd    string
	mode   string

	stdin          io.Reader
	stdout, stderr io.Writer
	// defaultMode is the surface's mode when neither --mode nor PALACE_MODE says.
	defaultMode host.Mode
}

// usageError marks errors in how palace was called (exit 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// run executes one palace invocation and returns its exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		// A second signal exits at once.
		<-ctx.Done()
		stop()
	}()
	g := &globals{stdin: stdin, stdout: stdout, stderr: stderr, defaultMode: host.Human}
	root := newRoot(g)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	return report(g, err)
}

// report prints err to stderr and returns its exit code.
func report(g *globals, err error) int {
	var ue usageError
	if errors.As(err, &ue) || isCobraUsage(err) {
		fmt.Fprintf(g.stderr, "palace: %s\nRun 'palace --help' for usage.\n", escapeControls(err.Error()))
		return 2
	}
	var ex exitError
	if errors.As(err, &ex) {
		return ex.code
	}
	// Messages quote the input at fault, which may come from a hostile
	// file: escaped like every other text palace prints.
	fmt.Fprintf(g.stderr, "palace: %s\n", escapeControls(err.Error()))
	var he *host.Error
	if errors.As(err, &he) {
		for _, r := range he.Reasons {
			fmt.Fprintf(g.stderr, "  - %s\n", escapeControls(r))
		}
	}
	return host.ExitCode(err)
}

// exitError carries an exit code for a result already printed (e.g. a gate
// deny printed as the command's output).
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "flag needs an argument",
		"invalid argument", "accepts ", "requires at least", "required flag", "if any flags in the group"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

func newRoot(g *globals) *cobra.Command {
	root := &cobra.Command{
		Use:   "palace",
		Short: "Governed memory for coding agents",
		Long: `palace records evidence, distills knowledge cards from it, promotes them only
through gates, and assembles bounded, cited context packs for agents.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if g.format != "text" && g.format != "json" {
				return usageError{fmt.Sprintf("--format %q is not valid: use text or json", g.format)}
			}
			return nil
		},
	}
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return usageError{err.Error()}
	})
	pf := root.PersistentFlags()
	pf.StringVar(&g.format, "format", "text", "output format: text or json")
	pf.StringVar(&g.home, "home", "", "palace home directory (default $PALACE_HOME or ~/.palace)")
	pf.StringVar(&g.cwd, "cwd", "", "directory whose anchors apply (default the current directory)")
	pf.StringVar(&g.mode, "mode", "", "human or agent; PALACE_MODE=agent cannot be raised by this flag")
	root.AddCommand(
		newInitCmd(g),
		newRecordCmd(g),
		newDistillCmd(g),
		newEvidenceCmd(g),
		newCardCmd(g),
		newGateCmd(g),
		newPromoteCmd(g),
		newDemoteCmd(g),
		newRetireCmd(g),
		newPublishCmd(g),
		newDoctorCmd(g),
		newVersionCmd(g),
	)
	for _, add := range extraCommands {
		root.AddCommand(add(g))
	}
	return root
}

// extraCommands lets each command family register itself from its own file.
var extraCommands []func(*globals) *cobra.Command

// hostOptions builds host options from the globals.
func (g *globals) hostOptions() (host.Options, error) {
	mode, err := host.ResolveMode(g.mode, os.Getenv(host.ModeEnv), g.defaultMode)
	if err != nil {
		return host.Options{}, err
	}
	return host.Options{Home: g.home, Cwd: g.cwd, Mode: mode}, nil
}

// open opens the host for one command.
func (g *globals) open(ctx context.Context) (*host.Host, error) {
	opts, err := g.hostOptions()
	if err != nil {
		return nil, err
	}
	return host.Open(ctx, opts)
}

// withHost opens the host, runs fn, and closes it.
func (g *globals) withHost(cmd *cobra.Command, fn func(context.Context, *host.Host) error) error {
	ctx := cmd.Context()
	h, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer h.Close()
	return fn(ctx, h)
}

func (g *globals) json() bool { return g.format == "json" }

// listFlag is a repeatable flag that also takes comma lists.
func listFlag(fs *pflag.FlagSet, p *[]string, name, usage string) {
	fs.StringSliceVar(p, name, nil, usage+" (repeat or comma-separate)")
}
