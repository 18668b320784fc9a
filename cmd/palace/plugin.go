package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/plugins"
)

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
			b, err := readModule(path)
			if err != nil {
				return err
			}
			rep := plugins.Inspect(path, b)
			return g.verdict(rep, func(w io.Writer) { fmt.Fprint(w, rep.String()) }, rep.WouldLoad)
		},
	}
}

// readModule reads a module file of at most 64 MiB (a Go plugin is ~3 MB;
// anything far larger is not a policy).
func readModule(path string) ([]byte, error) {
	return host.ReadInputFile("FILE", path, host.MaxModuleBytes)
}
