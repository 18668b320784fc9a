package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/policies"
	"github.com/spf13/cobra"
)

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
			written, err := host.WritePolicyFiles(out, files, true)
			if err != nil {
				return err
			}
			return g.output(map[string]any{"dir": out, "files": written}, func(w io.Writer) {
				for _, f := range written {
					fmt.Fprintln(w, f)
				}
			})
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
			written, err := host.WritePolicyFiles(out, files, false)
			if err != nil {
				return err
			}
			return g.output(map[string]any{"dir": out, "files": written}, func(w io.Writer) {
				for _, f := range written {
					fmt.Fprintln(w, f)
				}
				fmt.Fprintf(w, "next: edit %s, then palace policy test %s\n", written[0], out)
			})
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "folder to write into (default .palace/policies)")
	return cmd
}
