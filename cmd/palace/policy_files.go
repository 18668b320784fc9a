package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/palacehq/palace/host"
	"github.com/spf13/cobra"
)

func init() {
	extraPolicyCommands = append(extraPolicyCommands, newPolicyDefaultsCmd, newPolicyNewCmd)
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

Files already in DIR are replaced; nothing else is touched.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return usageError{"--out is required: the folder to write the default policies into"}
			}
			files, err := host.ExportDefaultPolicies()
			if err != nil {
				return err
			}
			written, err := writeFiles(out, files, true)
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
		Long:      `Write POINT.rego and POINT_test.rego into --out (default .palace/policies of the current directory). The policy starts as the embedded default; its test passes with palace policy test and with stock opa test beside palace policy defaults. Existing files are never overwritten.`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: pointNames(),
		RunE: func(cmd *cobra.Command, args []string) error {
			files, err := host.ScaffoldPolicy(host.PolicyPoint(args[0]))
			if err != nil {
				return usageError{err.Error()}
			}
			if out == "" {
				out = filepath.Join(".palace", "policies")
				if g.cwd != "" {
					out = filepath.Join(g.cwd, out)
				}
			}
			written, err := writeFiles(out, files, false)
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

func pointNames() []string {
	var out []string
	for _, p := range host.PolicyPoints() {
		out = append(out, string(p))
	}
	return out
}

// writeFiles writes files (relative name → content) under dir, sorted by
// name. Without replace an existing file is refused before anything is
// written.
func writeFiles(dir string, files map[string][]byte, replace bool) ([]string, error) {
	var names []string
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	var paths []string
	for _, n := range names {
		p := filepath.Join(dir, filepath.FromSlash(n))
		if _, err := os.Stat(p); err == nil && !replace {
			return nil, usageError{fmt.Sprintf("%s already exists: remove it or pass another --out", p)}
		}
		paths = append(paths, p)
	}
	for i, n := range names {
		if err := os.MkdirAll(filepath.Dir(paths[i]), 0o755); err != nil {
			return nil, fmt.Errorf("create %s: %w", filepath.Dir(paths[i]), err)
		}
		if err := os.WriteFile(paths[i], files[n], 0o644); err != nil {
			return nil, fmt.Errorf("write %s: %w", paths[i], err)
		}
	}
	return paths, nil
}
