package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/palacehq/palace/host"
)

func newWorkspaceCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "workspace show|allow-all-repos|deny-all-repos",
		Short: "What agents may read from this checkout: other repositories' memory only where a person allowed it",
		Long: `A workspace is one checkout. In agent mode palace never reads another
repository's cards or evidence (all_repos in MCP, --all-repos on the CLI) unless a
person allowed it for that workspace: allow-all-repos and deny-all-repos record the
decision (human mode only, exit 3 in agent mode) with who took it, when and why,
append-only; the newest one is in force, and palace doctor shows it. Outside a git
checkout there is no workspace to allow (exit 2). A person in human mode always
reads what they ask for.`,
	}
	show := &cobra.Command{
		Use:   "show",
		Short: "Show what agents may read from this checkout (read-only)",
		Args:  cobra.NoArgs,
		RunE: showing(g, func(ctx context.Context, h *host.Host, _ []string) (host.WorkspaceAccess, error) {
			return h.WorkspaceAccess(ctx)
		}, printWorkspace),
	}
	set := func(allowed bool, use, short string) *cobra.Command {
		var reason string
		c := &cobra.Command{
			Use:   use + " [--reason R]",
			Short: short,
			Args:  cobra.NoArgs,
			RunE: showing(g, func(ctx context.Context, h *host.Host, _ []string) (host.WorkspaceAccess, error) {
				return h.SetAllRepos(ctx, allowed, reason)
			}, printWorkspace),
		}
		c.Flags().StringVar(&reason, "reason", "", "why, in a sentence (kept with the decision)")
		return c
	}
	cmd.AddCommand(show,
		set(true, "allow-all-repos", "Let agents read every repository's memory from this checkout (human mode)"),
		set(false, "deny-all-repos", "Stop agents reading other repositories' memory from this checkout (human mode)"))
	return cmd
}

func printWorkspace(w io.Writer, acc host.WorkspaceAccess) {
	if acc.Workspace == "" {
		fmt.Fprintf(w, "outside a git checkout: agents read this palace's global memory only\n  %s\n", acc.How)
		return
	}
	state := "agents read this checkout's worktree, repository and global memory only"
	if acc.AllRepos {
		state = "agents may read every repository's memory from here (all_repos, --all-repos)"
	}
	fmt.Fprintf(w, "workspace %s: %s\n", escapeControls(acc.Workspace), state)
	if d := acc.Decision; d != nil {
		verb := "denied"
		if d.Allowed {
			verb = "allowed"
		}
		fmt.Fprintf(w, "  %s by %s at %s", verb, escapeControls(d.Actor), d.CreatedAt)
		if d.Reason != "" {
			fmt.Fprintf(w, ": %s", escapeControls(d.Reason))
		}
		fmt.Fprintln(w)
	} else {
		fmt.Fprintln(w, "  no one decided (agents may not)")
	}
	fmt.Fprintf(w, "  %s\n", acc.How)
}
