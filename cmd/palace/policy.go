package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/internal/limits"
	"github.com/palacehq/palace/plugins"
	"github.com/palacehq/palace/policies"
)

func newPolicyCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "List, check, evaluate, test and format the decision-point policies",
		Long: `Policies decide gates, scope, injection lanes and mailbox hygiene. They load from
the embedded defaults, then $PALACE_HOME/policies/, then <repo>/.palace/policies/;
a later source's package replaces an earlier one's whole.

Exit codes: 0 ok · 1 a "no" (errors found, a test failed, the gate denied)
· 2 bad usage or input · 4 internal error.`,
	}
	cmd.AddCommand(newPolicyListCmd(g), newPolicyCheckCmd(g), newPolicyEvalCmd(g), newPolicyTestCmd(g), newPolicyFmtCmd(g),
		newPolicyDefaultsCmd(g), newPolicyNewCmd(g))
	return cmd
}

// policySources resolves the sources: DIR alone on top of the embedded
// defaults when given (reproducible in CI, whatever the user's home holds),
// else the workspace's home and repo folders.
func (g *globals) policySources(ctx context.Context, dir string) (policies.Sources, policies.Options, error) {
	opts, err := g.hostOptions()
	if err != nil {
		return policies.Sources{}, policies.Options{}, err
	}
	src, popts, err := host.PolicyConfigFor(ctx, opts)
	if err != nil || dir == "" {
		return src, popts, err
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return policies.Sources{}, policies.Options{}, usageError{fmt.Sprintf("policy directory %s does not exist: pass a folder of .rego files", dir)}
	}
	return host.PolicyDirSources(dir), popts, nil
}

// writePolicyFiles writes files into dir (replacing files already there, or
// never) and prints the paths written, then next when it is not empty.
func (g *globals) writePolicyFiles(dir string, files map[string][]byte, replace bool, next string) error {
	written, err := host.WritePolicyFiles(dir, files, replace)
	if err != nil {
		return err
	}
	return g.output(map[string]any{"dir": dir, "files": written}, func(w io.Writer) {
		for _, f := range written {
			fmt.Fprintln(w, f)
		}
		if next != "" {
			fmt.Fprintf(w, next, written[0], dir)
		}
	})
}

// policyErrors prints located policy errors, one `file:line:col: code:
// message` per line, to w and returns exit 1. Other errors pass through.
func (g *globals) policyErrors(w io.Writer, err error) error {
	var es policies.Errors
	if !errors.As(err, &es) {
		return err
	}
	if g.json() {
		printJSON(g.stdout, map[string]any{"ok": false, "errors": nonNil(es)})
	} else {
		for _, e := range es {
			fmt.Fprintln(w, e.Error())
		}
	}
	return exitError{1}
}

type policyList struct {
	SetHash string            `json:"set_hash"`
	Sources policies.Sources  `json:"sources"`
	Points  []policies.Served `json:"points"`
	Files   []policies.File   `json:"files"`
	// Lanes is the lanes configuration in force (defaults and lanes.json).
	Lanes policies.LanesConfig `json:"lanes_config"`
}

func newPolicyListCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "Show which source, file, engine and hash serves each decision point",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			src, popts, err := g.policySources(ctx, "")
			if err != nil {
				return err
			}
			set, err := policies.Load(ctx, src, popts)
			if err != nil {
				return g.policyErrors(g.stderr, err)
			}
			l := policyList{SetHash: set.Hash(), Sources: src, Points: []policies.Served{}, Files: set.Files(), Lanes: set.LanesConfig()}
			for _, p := range policies.Points {
				if sv, ok := set.Served(p); ok {
					l.Points = append(l.Points, sv)
				}
			}
			return g.output(l, func(w io.Writer) { printPolicyList(w, l) })
		},
	}
}

func printPolicyList(w io.Writer, l policyList) {
	p := newPainter(w)
	t := newTable(w)
	fmt.Fprintln(t, "POINT\tSOURCE\tENGINE\tHASH\tFILES")
	for _, sv := range l.Points {
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%s\n", sv.Point.Package(), sv.Source, sv.Engine, shortHash(sv.Hash), strings.Join(sv.Files, ", "))
	}
	t.Flush()
	var configs []string
	for _, f := range l.Files {
		if f.Kind == policies.KindConfig {
			configs = append(configs, f.Path)
		}
	}
	if len(configs) > 0 {
		c := l.Lanes
		fmt.Fprintf(w, "lanes config %s: core %d · scoped %d · references %d · compact cap %d · foundational cap %d · cooling after %d skips, %d trims\n",
			strings.Join(configs, ", "), c.CoreInlineLimit, c.ScopedInlineLimit, c.RefOnlyLimit, c.CompactCharLimit, c.FoundationalInlineCharLimit,
			c.SkipCoolingThreshold30d, c.TrimCoolingThreshold30d)
	}
	fmt.Fprintf(w, "%s\n", p.dim(fmt.Sprintf("set %s · home %s · repo %s", shortHash(l.SetHash), orDash(l.Sources.HomeDir), orDash(l.Sources.RepoDir))))
}

func newPolicyCheckCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "check [DIR]",
		Short: "Compile every policy and test file; exit 1 with file:line:col errors",
		Long: `Compile the policies palace would load (or DIR on top of the embedded defaults),
including *_test.rego files, and print each error as file:line:col: code: message.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			src, popts, err := g.policySources(ctx, firstArg(args))
			if err != nil {
				return err
			}
			set, err := policies.Check(ctx, src, popts)
			if err != nil {
				return g.policyErrors(g.stdout, err)
			}
			n := 0
			for _, f := range set.Files() {
				if f.Source != policies.SourceEmbedded {
					n++
				}
			}
			return g.output(map[string]any{"ok": true, "errors": []policies.Error{}, "set_hash": set.Hash()}, func(w io.Writer) {
				fmt.Fprintf(w, "ok: %s of yours compiled with the embedded defaults · set %s\n", plural(n, "policy file"), shortHash(set.Hash()))
			})
		},
	}
}

func newPolicyEvalCmd(g *globals) *cobra.Command {
	var input, dir, engine string
	cmd := &cobra.Command{
		Use:   "eval POINT --input FILE|-",
		Short: "Evaluate one decision point on a JSON input and print its output",
		Long: `Evaluate gate, scope, lanes or mailbox exactly as palace would (same engine,
same fallback) and print the output JSON. The input's shape is documented in
policies/README.md; an unknown field is an error. Exit 1 when the gate denies or
the mailbox rules deny the letter.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			point, err := policies.ParsePoint(args[0])
			if err != nil {
				return usageError{err.Error()}
			}
			if engine != "auto" && engine != "rego" {
				return usageError{fmt.Sprintf("--engine %q is not valid: use auto or rego", engine)}
			}
			raw, err := g.readInput(input)
			if err != nil {
				return err
			}
			src, popts, err := g.policySources(ctx, dir)
			if err != nil {
				return err
			}
			popts.RegoOnly = engine == "rego"
			set, err := policies.Load(ctx, src, popts)
			if err != nil {
				return g.policyErrors(g.stderr, err)
			}
			out, d, err := set.EvalJSON(ctx, point, raw)
			var ie *policies.InputError
			if errors.As(err, &ie) {
				return usageError{ie.Error() + ": see policies/README.md for the input of " + point.Package()}
			}
			if err != nil {
				fmt.Fprintf(g.stderr, "palace: %v\n", err)
				return exitError{1}
			}
			v := any(out) // text: the output as JSON, the decision's source on stderr
			if g.json() {
				v = map[string]any{"point": point, "output": out, "policy": d}
			}
			if err := printJSON(g.stdout, v); err != nil {
				return err
			}
			if !g.json() {
				p := newPainter(g.stderr)
				fmt.Fprintln(g.stderr, p.dim(fmt.Sprintf("%s · %s · engine %s · %s", point.Package(), orDash(d.Source), orDash(d.Engine), shortHash(d.Hash))))
				if d.Fallback != "" {
					fmt.Fprintf(g.stderr, "policy_fallback: %s\n", d.Fallback)
				}
			}
			if gate, ok := out.(policies.GateOutput); ok && !gate.Allow {
				return exitError{1}
			}
			if deny, ok := out.([]string); ok && len(deny) > 0 {
				return exitError{1}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&input, "input", "", "JSON input file, or - for stdin (required)")
	cmd.Flags().StringVar(&dir, "dir", "", "evaluate DIR's policies on top of the embedded defaults instead of the workspace's")
	cmd.Flags().StringVar(&engine, "engine", "auto", "auto (what palace serves) or rego (OPA even for an unmodified default)")
	_ = cmd.MarkFlagRequired("input")
	return cmd
}

// readInput reads a JSON document from a file or stdin ("-"), at most 16 MiB.
func (g *globals) readInput(name string) ([]byte, error) {
	if name != "-" {
		return limits.ReadInputFile("--input", name, host.MaxInputBytes)
	}
	return io.ReadAll(limits.LimitInput("--input", g.stdin, host.MaxInputBytes))
}

func newPolicyTestCmd(g *globals) *cobra.Command {
	var run string
	var verbose bool
	cmd := &cobra.Command{
		Use:   "test [DIR]",
		Short: "Run *_test.rego files like `opa test`; exit 1 if any test fails",
		Long: `Run the Rego unit tests of DIR (against DIR's policies on top of the embedded
defaults) or, without DIR, of every source palace loads. Each test prints PASS,
FAIL or ERROR; a failure names the expression that failed as file:line:col.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			dir := firstArg(args)
			src, _, err := g.policySources(ctx, dir)
			if err != nil {
				return err
			}
			opts := policies.TestOptions{Run: run}
			if dir != "" {
				opts.Sources = []string{policies.SourceRepo}
			}
			rep, err := policies.RunTests(ctx, src, opts)
			if err != nil {
				var es policies.Errors
				if errors.As(err, &es) {
					return g.policyErrors(g.stdout, err)
				}
				return usageError{err.Error()}
			}
			return g.verdict(rep, func(w io.Writer) { printTests(w, rep, verbose) }, rep.OK())
		},
	}
	cmd.Flags().StringVar(&run, "run", "", "run only tests whose package.name matches this regular expression")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "also print durations and print() output")
	return cmd
}

func printTests(w io.Writer, rep policies.TestReport, verbose bool) {
	p := newPainter(w)
	file := ""
	for _, r := range rep.Results {
		if r.File != file {
			if file != "" {
				fmt.Fprintln(w)
			}
			file = r.File
			fmt.Fprintf(w, "%s:\n", file)
		}
		verdict := map[string]string{"pass": p.paint("32", "PASS"), "fail": p.paint("1;31", "FAIL"), "error": p.paint("1;31", "ERROR"), "skip": p.dim("SKIPPED")}[r.Outcome]
		line := fmt.Sprintf("data.%s.%s: %s", r.Package, r.Name, verdict)
		if verbose {
			line += p.dim(fmt.Sprintf(" (%s)", r.Duration))
		}
		fmt.Fprintln(w, line)
		switch r.Outcome {
		case "fail":
			fmt.Fprintf(w, "  %s\n", cmp.Or(r.FailedAt, fmt.Sprintf("%s:%d: the test is undefined", r.File, r.Line)))
		case "error":
			fmt.Fprintf(w, "  %s:%d: %s\n", r.File, r.Line, r.Error)
		}
		if verbose && r.Output != "" {
			for _, l := range strings.Split(strings.TrimRight(r.Output, "\n"), "\n") {
				fmt.Fprintf(w, "  %s\n", p.dim(l))
			}
		}
	}
	if file != "" {
		fmt.Fprintln(w, strings.Repeat("-", 80))
	}
	total := len(rep.Results)
	if total == 0 {
		fmt.Fprintln(w, "no tests found: name test files *_test.rego and rules test_*")
		return
	}
	for _, c := range []struct {
		label string
		n     int
	}{{"PASS", rep.Pass}, {"FAIL", rep.Fail}, {"ERROR", rep.Errors}, {"SKIPPED", rep.Skip}} {
		if c.n > 0 {
			fmt.Fprintf(w, "%s: %d/%d\n", c.label, c.n, total)
		}
	}
}

func newPolicyFmtCmd(g *globals) *cobra.Command {
	var check bool
	cmd := &cobra.Command{
		Use:   "fmt [PATH...]",
		Short: "Format Rego files with OPA's formatter (--check: only report)",
		Long: `Rewrite .rego files in OPA's canonical format. PATH is a file or a folder;
the default is the workspace's .palace/policies/. With --check nothing is written:
unformatted files are listed and the exit code is 1.

A file that is a symbolic link, or lies under one inside the checkout (a
linked .palace or policies folder), is not rewritten: exit 2, naming the link.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			paths, err := g.fmtPaths(cmd.Context(), args)
			if err != nil {
				return err
			}
			var changed []string
			var errs policies.Errors
			for _, path := range paths {
				src, err := limits.ReadInputFile("PATH", path, host.MaxModuleBytes)
				if err != nil {
					return err
				}
				out, err := policies.Format(path, src)
				if err != nil {
					var es policies.Errors
					if errors.As(err, &es) {
						errs = append(errs, es...)
						continue
					}
					return err
				}
				if string(out) == string(src) {
					continue
				}
				changed = append(changed, path)
				if !check {
					if err := host.ReplacePolicyFile(path, out); err != nil {
						return err
					}
				}
			}
			if len(errs) > 0 {
				return g.policyErrors(g.stdout, errs)
			}
			changed = nonNil(changed)
			res := map[string]any{"check": check, "files": len(paths), "unformatted": changed}
			if !check {
				res = map[string]any{"check": check, "files": len(paths), "formatted": changed}
			}
			return g.verdict(res, func(w io.Writer) {
				for _, c := range changed {
					if check {
						fmt.Fprintf(w, "%s: not formatted\n", c)
					} else {
						fmt.Fprintf(w, "formatted %s\n", c)
					}
				}
				if len(changed) == 0 {
					fmt.Fprintf(w, "ok: %s already formatted\n", plural(len(paths), "file"))
				}
			}, !check || len(changed) == 0)
		},
	}
	cmd.Flags().BoolVar(&check, "check", false, "report unformatted files and exit 1 instead of rewriting them")
	return cmd
}

// fmtPaths expands the fmt arguments into .rego files.
func (g *globals) fmtPaths(ctx context.Context, args []string) ([]string, error) {
	if len(args) == 0 {
		src, _, err := g.policySources(ctx, "")
		if err != nil {
			return nil, err
		}
		if src.RepoDir == "" {
			return nil, usageError{"not in a git checkout: pass the files or folders to format"}
		}
		args = []string{src.RepoDir}
	}
	var out []string
	for _, a := range args {
		fi, err := os.Stat(a)
		if err != nil {
			return nil, usageError{fmt.Sprintf("%s does not exist: pass .rego files or folders", a)}
		}
		if !fi.IsDir() {
			out = append(out, a)
			continue
		}
		files, err := policies.PolicyFiles(a)
		if err != nil {
			return nil, err
		}
		out = append(out, files...)
	}
	return out, nil
}

func firstArg(args []string) string {
	if len(args) > 0 {
		return args[0]
	}
	return ""
}

func newPolicyDefaultsCmd(g *globals) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "defaults --out DIR",
		Short: "Write the embedded default policies for stock opa (opa test DIR .palace/policies)",
		Long: `Write the embedded default policies under DIR/palace/default/, in the packages
team policies import (data.palace.default.gate, …), so stock OPA tooling sees
what palace does:

  palace policy defaults --out /tmp/palace-defaults
  opa test /tmp/palace-defaults .palace/policies
  opa check /tmp/palace-defaults .palace/policies

Files already in DIR are replaced; nothing else is touched. Inside a git
checkout nothing is written through a symbolic link: a link in a file's
place, or a linked folder on the way (.palace, .palace/policies), is refused
naming the link (exit 2), and nothing is written.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return usageError{"--out is required: the folder to write the default policies into"}
			}
			files, err := policies.ExportDefaults()
			if err != nil {
				return err
			}
			return g.writePolicyFiles(out, files, true, "")
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "folder to write into (created if missing)")
	return cmd
}

func newPolicyNewCmd(g *globals) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:       "new POINT",
		Short:     "Write a team policy skeleton for POINT (gate, scope, lanes, mailbox, research) with a passing test",
		Long:      `Write POINT.rego and POINT_test.rego into --out (default .palace/policies of the current directory). The policy starts as the embedded default; its test passes with palace policy test and with stock opa test beside palace policy defaults. Existing files are never overwritten. Nothing is written through a symbolic link inside the checkout (a linked .palace or .palace/policies, or a link in a file's place, even a dangling one): the link is named, the exit code is 2, and nothing is written.`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: domain.Strings(policies.Points),
		RunE: func(cmd *cobra.Command, args []string) error {
			files, err := policies.Scaffold(policies.Point(args[0]))
			if err != nil {
				return usageError{err.Error()}
			}
			if out == "" {
				out = filepath.Join(".palace", "policies")
				if g.cwd != "" {
					out = filepath.Join(g.cwd, out)
				}
			}
			return g.writePolicyFiles(out, files, false, "next: edit %s, then palace policy test %s\n")
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "folder to write into (default .palace/policies)")
	return cmd
}

func newPluginCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plugin",
		Short: "Inspect WebAssembly policy plugins",
		Long: `A .wasm file in $PALACE_HOME/policies/ or <repo>/.palace/policies/ is an Extism
plugin that serves the decision points it exports (gate, scope, lanes, mailbox, research).
See plugins/README.md for how to write and build one.`,
	}
	cmd.AddCommand(newPluginInspectCmd(g))
	return cmd
}

func newPluginInspectCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "inspect FILE.wasm",
		Short: "Show a module's ABI, exports, imports, size, decision points and whether palace would load it",
		Long: `Read a WebAssembly module without running it and say what palace would make of
it: its ABI (Extism or plain wasm), exports, imports, size, the decision points it
would serve and a verdict. A module that would not load gets every reason, each
worded as the load error would be.

Exit codes: 0 it would load · 1 it would not · 2 the file cannot be read.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := args[0]
			// At most 64 MiB: a Go plugin is ~3 MB; anything far larger is not a policy.
			b, err := limits.ReadInputFile("FILE", path, host.MaxModuleBytes)
			if err != nil {
				return err
			}
			rep := plugins.Inspect(path, b)
			return g.verdict(rep, func(w io.Writer) { fmt.Fprint(w, rep.String()) }, rep.WouldLoad)
		},
	}
}
