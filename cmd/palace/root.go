// Command palace is the one binary: its subcommands parse flags and call
// host. It holds no logic of its own beyond presenting results.
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

// globals are the flags every command takes.
type globals struct {
	format string
	home   string
	cwd    string
	mode   string

	stdin          io.Reader
	stdout, stderr io.Writer
	// defaultMode is the surface's mode when neither --mode nor PALACE_MODE says.
	defaultMode host.Mode
	// deferCreate opens a home without a database as empty until the first
	// write (a long-running server that may only ever read).
	deferCreate bool
	// args are the command line as given, for a flag whose value may be
	// optional (--external) to take the word written right after it.
	args []string
}

// usageError marks errors in how palace was called (exit 2).
type usageError struct{ msg string }

// usageHint is the line after a usage error: the help of the command that
// was called, as git and kubectl point at the subcommand's own help.
func usageHint(cmd *cobra.Command) string {
	path := "palace"
	if cmd != nil && cmd.Name() != "help" {
		path = cmd.CommandPath()
	}
	return fmt.Sprintf("Run '%s --help' for usage.", path)
}

func (e usageError) Error() string { return e.msg }

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

// run executes one palace invocation and returns its exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		// A second signal exits at once.
		<-ctx.Done()
		stop()
	}()
	g := &globals{stdin: stdin, stdout: stdout, stderr: stderr, defaultMode: host.Human, args: args}
	root := newRoot(g)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	if cmd, err := findCommand(root, args); err != nil {
		return report(g, cmd, err)
	}
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return 0
	}
	return report(g, cmd, err)
}

// report prints err to stderr and returns its exit code; cmd is the
// command that was called, for a usage error's hint.
func report(g *globals, cmd *cobra.Command, err error) int {
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(g.stderr, "palace: %s\n%s\n", escapeControls(err.Error()), usageHint(cmd))
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

func newRoot(g *globals) *cobra.Command {
	root := &cobra.Command{
		Use:   "palace",
		Short: "Governed memory for coding agents",
		Long: `palace records evidence, distills knowledge cards from it, promotes them only
through gates, and assembles bounded, cited context packs for agents.`,
		Version:       palaceVersion(),
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
	for _, add := range []func(*globals) *cobra.Command{
		newInitCmd, newRecordCmd, newDistillCmd, newEvidenceCmd, newCardCmd, newGateCmd, newPromoteCmd, newResolveCmd,
		newDemoteCmd, newRetireCmd, newPublishCmd, newDoctorCmd, newVersionCmd, newAdoptCmd, newAdoptionCmd, newAuditCmd,
		newBenchCmd, newBriefCmd, newContextCmd, newExportCmd, newImportCmd, newHintsCmd, newLSPCmd, newMailboxCmd,
		newMaintenanceCmd, newMCPCmd, newPluginCmd, newPolicyCmd, newResearchCmd, newSyncCmd, newCardsCmd, newUICmd,
		newVerifyCmd, newWorkspaceCmd,
	} {
		root.AddCommand(add(g))
	}
	root.SetVersionTemplate("palace {{.Version}}\n")
	// cobra's own usage template, with the flag lists rendered by flagUsages.
	root.SetUsageTemplate(strings.NewReplacer(".LocalFlags.FlagUsages", "flagUsages .LocalFlags",
		".InheritedFlags.FlagUsages", "flagUsages .InheritedFlags").Replace(root.UsageTemplate()))
	root.SetHelpCommand(newHelpCmd(root))
	// cobra adds its completion command on first use; add it now so the
	// tree below gets its flags completed too.
	root.InitDefaultCompletionCmd()
	groupCommands(root)
	finishTree(g, root)
	markUsageErrors(root)
	return root
}

// hostOptions builds host options from the globals.
func (g *globals) hostOptions() (host.Options, error) {
	mode, err := host.ResolveMode(g.mode, os.Getenv(host.ModeEnv), g.defaultMode)
	if err != nil {
		return host.Options{}, err
	}
	return host.Options{Home: g.home, Cwd: g.cwd, Mode: mode, DeferCreate: g.deferCreate}, nil
}

// withHost opens the host, runs fn, and closes it.
func (g *globals) withHost(cmd *cobra.Command, fn func(context.Context, *host.Host) error) error {
	ctx := cmd.Context()
	opts, err := g.hostOptions()
	if err != nil {
		return err
	}
	h, err := host.Open(ctx, opts)
	if err != nil {
		return err
	}
	defer h.Close()
	return fn(ctx, h)
}

// showing is a RunE that runs fn on the host with the command's arguments
// and prints what it returns: as JSON, or with text for the human form.
func showing[T any](g *globals, fn func(context.Context, *host.Host, []string) (T, error), text func(io.Writer, T)) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		return g.withHost(cmd, func(ctx context.Context, h *host.Host) error {
			v, err := fn(ctx, h, args)
			if err != nil {
				return err
			}
			return g.output(v, func(w io.Writer) { text(w, v) })
		})
	}
}

// verdict prints v as output does and then exits 1 unless ok: a "no"
// (a denial, a failed check) printed as the command's result.
func (g *globals) verdict(v any, text func(io.Writer), ok bool) error {
	if err := g.output(v, text); err != nil || ok {
		return err
	}
	return exitError{1}
}

func (g *globals) json() bool { return g.format == "json" }

// followsFlag says whether word was written right after flag on the
// command line (and is no flag itself, nor "-", which means stdin).
func (g *globals) followsFlag(flag, word string) bool {
	if word == "-" || strings.HasPrefix(word, "-") {
		return false
	}
	for i, a := range g.args {
		if a == "--" {
			return false
		}
		if a == flag && i+1 < len(g.args) && g.args[i+1] == word {
			return true
		}
	}
	return false
}

// listFlag is a repeatable flag that also takes comma lists, for values
// that never hold a comma (ids, tags, languages, fields, intents, tools).
func listFlag(fs *pflag.FlagSet, p *[]string, name, usage string) {
	fs.StringSliceVar(p, name, nil, usage+" (repeat or comma-separate)")
}

// verbatimFlag is a repeatable flag whose every occurrence is one value,
// taken as written, for values that may hold commas or quotes (path globs
// such as {a,b}/**, regular expressions such as a{1,3}).
func verbatimFlag(fs *pflag.FlagSet, p *[]string, name, usage string) {
	fs.Var(&verbatimList{p: p}, name, usage+" (repeat for more; each value is taken as written)")
}

type verbatimList struct {
	p       *[]string
	changed bool
}

func (l *verbatimList) Set(v string) error {
	if !l.changed {
		*l.p, l.changed = nil, true
	}
	*l.p = append(*l.p, unquoteCSVField(v))
	return nil
}

func (l *verbatimList) Type() string { return "stringArray" }

func (l *verbatimList) String() string { return "[" + strings.Join(*l.p, ",") + "]" }

// unquoteCSVField unwraps a value written as one CSV-quoted field — wrapped
// in double quotes, every inner quote doubled — when the quoting was needed
// (the value holds a comma, a quote, a newline or edge spaces), which is
// how these flags were passed when they were comma lists. Anything else is
// returned as is.
func unquoteCSVField(v string) string {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return v
	}
	inner := v[1 : len(v)-1]
	if strings.Count(inner, `"`) != 2*strings.Count(inner, `""`) {
		return v
	}
	u := strings.ReplaceAll(inner, `""`, `"`)
	if strings.ContainsAny(u, ",\"\n") || u != strings.TrimSpace(u) {
		return u
	}
	return v
}
