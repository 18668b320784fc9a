package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
)

// finishTree gives every command of the tree what gh, kubectl and opa users
// expect: a group command given an unknown subcommand fails with exit 2 and
// a suggestion, ids complete from the palace (most recent first) and
// enumerated flags complete their values.
func finishTree(g *globals, cmd *cobra.Command) {
	// The root already answers an unknown command this way.
	if cmd.HasParent() && cmd.HasSubCommands() && !cmd.Runnable() {
		cmd.Args = cobra.ArbitraryArgs
		cmd.RunE = func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			return usageError{unknownCommand(cmd, args[0])}
		}
	}
	if cmd.ValidArgsFunction == nil {
		switch {
		case strings.HasPrefix(cmd.Use, cmd.Name()+" EVIDENCE_ID"):
			cmd.ValidArgsFunction = completeFirstArg(g, evidenceIDs)
		case strings.HasPrefix(cmd.Use, cmd.Name()+" CARD_ID"):
			cmd.ValidArgsFunction = completeFirstArg(g, cardIDs)
		}
	}
	cmd.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) { completeFlag(g, cmd, f) })
	if !cmd.HasParent() {
		cmd.PersistentFlags().VisitAll(func(f *pflag.Flag) { completeFlag(g, cmd, f) })
	}
	for _, c := range cmd.Commands() {
		finishTree(g, c)
	}
}

// unknownCommand is cobra's own message for the root, for any group.
func unknownCommand(cmd *cobra.Command, arg string) string {
	msg := fmt.Sprintf("unknown command %q for %q", arg, cmd.CommandPath())
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2
	}
	if s := cmd.SuggestionsFor(arg); len(s) > 0 {
		msg += "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t")
	}
	return msg
}

// enumValues are the values of enumerated flags by flag name; flagValues
// narrows them for the commands that take fewer.
var enumValues = map[string][]string{
	"tier":   domain.Strings(domain.Tiers),
	"status": domain.Strings(domain.Statuses),
	"anchor": append(slices.Clone(domain.Strings(domain.AnchorKinds)), "all"),
	"role":   domain.Strings(domain.Roles),
	"to":     {"repo", "global"},
	"target": {string(domain.StatusPromoted), string(domain.StatusCanonical)},
	"format": {"text", "json"},
}

func flagValues(cmd *cobra.Command, name string) []string {
	switch cmd.CommandPath() + " --" + name {
	case "palace demote --target":
		return []string{string(domain.StatusDemoted), string(domain.StatusRetired)}
	case "palace distill --status":
		return []string{string(domain.StatusPromoted), string(domain.StatusCanonical)}
	case "palace distill --anchor", "palace record --anchor", "palace audit action --anchor":
		return domain.Strings(domain.AnchorKinds)
	}
	return enumValues[name]
}

// evidenceFlags take evidence ids.
var evidenceFlags = []string{"evidence", "supporting", "verification", "teaching", "counterexample"}

func completeFlag(g *globals, cmd *cobra.Command, f *pflag.Flag) {
	if _, ok := cmd.GetFlagCompletionFunc(f.Name); ok {
		return
	}
	var fn cobra.CompletionFunc
	switch {
	case slices.Contains(evidenceFlags, f.Name):
		fn = func(cmd *cobra.Command, _ []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return completeIDs(g, cmd, evidenceIDs, prefix)
		}
	case flagValues(cmd, f.Name) != nil:
		vals := flagValues(cmd, f.Name)
		fn = cobra.FixedCompletions(vals, cobra.ShellCompDirectiveNoFileComp)
	default:
		return
	}
	// Registration fails only for an unknown or already registered flag,
	// which the checks above rule out.
	_ = cmd.RegisterFlagCompletionFunc(f.Name, fn)
}

type idKind int

const (
	cardIDs idKind = iota
	evidenceIDs
)

// completeLimit bounds the candidates a shell is offered.
const completeLimit = 50

func completeFirstArg(g *globals, kind idKind) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return completeIDs(g, cmd, kind, prefix)
	}
}

// completeIDs asks the host for recent ids. A home without a database
// offers nothing and is left as it is: completing must not create a palace.
func completeIDs(g *globals, cmd *cobra.Command, kind idKind, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
	const dir = cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
	opts, err := g.hostOptions()
	if err != nil {
		return nil, dir
	}
	h, err := host.OpenExisting(cmd.Context(), opts)
	if err != nil {
		return nil, dir
	}
	defer h.Close()
	var hints []host.IDHint
	if kind == cardIDs {
		hints, err = h.RecentCardIDs(cmd.Context(), prefix, completeLimit)
	} else {
		hints, err = h.RecentEvidenceIDs(cmd.Context(), prefix, completeLimit)
	}
	if err != nil {
		return nil, dir
	}
	out := make([]cobra.Completion, len(hints))
	for i, hint := range hints {
		out[i] = cobra.CompletionWithDesc(hint.ID, truncate(hint.Note, 60))
	}
	return out, dir
}
