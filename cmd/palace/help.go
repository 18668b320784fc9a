package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
)

// The root's help lists commands in groups, as git and kubectl do, so a new
// user finds the everyday ones first; developer commands are hidden.
var commandGroups = []struct {
	id, title string
	commands  []string
}{
	{"everyday", "Everyday commands:", []string{"record", "distill", "context", "brief", "card", "evidence", "hints", "verify", "adopt"}},
	{"lifecycle", "Card lifecycle (human mode, through the gate):", []string{"gate", "promote", "demote", "retire", "resolve", "publish"}},
	{"team", "Team memory in git, mailbox and research:", []string{"sync", "export", "import", "cards", "mailbox", "research", "workspace"}},
	{"inspect", "Inspect and audit:", []string{"audit", "adoption", "doctor", "policy", "plugin"}},
	{"admin", "Set up and serve:", []string{"init", "maintenance", "lsp", "mcp", "ui", "completion", "help", "version"}},
}

// groupCommands puts the root's commands in their groups. A command in no
// group (but the hidden developer ones) is listed under "Additional
// Commands", which the help test refuses.
func groupCommands(root *cobra.Command) {
	group := map[string]string{}
	for _, g := range commandGroups {
		root.AddGroup(&cobra.Group{ID: g.id, Title: g.title})
		for _, c := range g.commands {
			group[c] = g.id
		}
	}
	root.SetHelpCommandGroupID("admin")
	root.SetCompletionCommandGroupID("admin")
	for _, c := range root.Commands() {
		c.GroupID = group[c.Name()]
	}
}

// newHelpCmd is `palace help [command]`: cobra's own prints the root's
// usage and exits 0 for a topic it does not know; this one fails with
// exit 2 and suggests the command meant, as an unknown command does.
func newHelpCmd(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		ValidArgsFunction: func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			cmd, _, err := root.Find(args)
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var names []cobra.Completion
			for _, sub := range cmd.Commands() {
				if sub.IsAvailableCommand() && strings.HasPrefix(sub.Name(), toComplete) {
					names = append(names, cobra.CompletionWithDesc(sub.Name(), sub.Short))
				}
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			cmd, rest, err := root.Find(args)
			if err != nil || cmd == nil {
				cmd, rest = root, args
			}
			if len(rest) > 0 {
				return usageError{msg: "unknown help topic " + strings.TrimPrefix(unknownCommand(cmd, rest[0]), "unknown command ")}
			}
			cmd.InitDefaultHelpFlag()
			return cmd.Help()
		},
	}
}

func init() { cobra.AddTemplateFunc("flagUsages", flagUsages) }

// boolSuffix is what pflag 1.1 writes after every boolean flag. A boolean
// flag is a switch (--dry-run), as in git and kubectl: the suffix only
// crowds the list.
const boolSuffix = "[=true|false]"

// flagUsages is pflag's FlagUsages without boolSuffix, with the description
// column moved left by what the longest flag no longer needs.
func flagUsages(fs *pflag.FlagSet) string {
	s := fs.FlagUsages()
	if !strings.Contains(s, boolSuffix) {
		return s
	}
	lines := strings.Split(s, "\n")
	// pflag starts every description at one column, 3 spaces past the
	// longest flag part; continuation lines are indented to it.
	col, need := 0, 0
	for i, l := range lines {
		lead := len(l) - len(strings.TrimLeft(l, " "))
		if !strings.HasPrefix(l[lead:], "-") {
			continue
		}
		l = strings.Replace(l, boolSuffix, strings.Repeat(" ", len(boolSuffix)), 1)
		lines[i] = l
		end := strings.Index(l[lead:], "   ")
		if end < 0 {
			continue // no description
		}
		end += lead
		need = max(need, end+3)
		col = max(col, len(l)-len(strings.TrimLeft(l[end:], " ")))
	}
	cut := col - need
	if cut <= 0 {
		return strings.Join(lines, "\n")
	}
	for i, l := range lines {
		if len(l) >= col && strings.TrimSpace(l[col-cut:col]) == "" {
			lines[i] = l[:col-cut] + l[col:]
		}
	}
	return strings.Join(lines, "\n")
}

// argsError is the message for a command given too few or too many
// arguments, naming them from its Use line ("missing CARD_ID") where cobra
// only counts them ("accepts 1 arg(s), received 0").
func argsError(cmd *cobra.Command, args []string, err error) string {
	names, required := argNames(cmd.Use)
	if len(names) == 0 {
		return err.Error()
	}
	use := strings.TrimSuffix(cmd.UseLine(), " [flags]")
	if len(args) < required {
		return fmt.Sprintf("missing %s: usage: %s", strings.Join(names[len(args):required], " and "), use)
	}
	return fmt.Sprintf("too many arguments (%s): usage: %s", strings.Join(args, " "), use)
}

// argNames reads the positional arguments of a Use line: the upper-case
// words that are not a flag's value ("promote CARD_ID --reason R" →
// CARD_ID), and how many of them are required (not in brackets).
func argNames(use string) (names []string, required int) {
	words := strings.Fields(use)
	flagValue := false
	for _, w := range words[1:] {
		optional := strings.HasPrefix(w, "[")
		bare := strings.Trim(w, "[]")
		if strings.HasPrefix(bare, "-") && len(bare) > 1 {
			flagValue = !strings.Contains(bare, "=")
			continue
		}
		if flagValue {
			flagValue = false
			continue
		}
		bare = strings.TrimRight(bare, "….")
		if bare == "" || strings.ToUpper(bare) != bare || strings.ToLower(bare) == bare {
			continue
		}
		names = append(names, bare)
		if !optional {
			required++
		}
	}
	return names, required
}

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
			cmd.ValidArgsFunction = completeFirstArg(g, (*host.Host).RecentEvidenceIDs)
		case strings.HasPrefix(cmd.Use, cmd.Name()+" CARD_ID"):
			cmd.ValidArgsFunction = completeFirstArg(g, (*host.Host).RecentCardIDs)
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
			return completeIDs(g, cmd, (*host.Host).RecentEvidenceIDs, prefix)
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

// recentIDs is a host's recent card or evidence ids.
type recentIDs func(h *host.Host, ctx context.Context, prefix string, n int) ([]host.IDHint, error)

// completeLimit bounds the candidates a shell is offered.
const completeLimit = 50

func completeFirstArg(g *globals, recent recentIDs) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return completeIDs(g, cmd, recent, prefix)
	}
}

// completeIDs asks the host for recent ids. A home without a database
// offers nothing and is left as it is: completing must not create a palace.
func completeIDs(g *globals, cmd *cobra.Command, recent recentIDs, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
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
	hints, err := recent(h, cmd.Context(), prefix, completeLimit)
	if err != nil {
		return nil, dir
	}
	out := make([]cobra.Completion, len(hints))
	for i, hint := range hints {
		out[i] = cobra.CompletionWithDesc(hint.ID, truncate(hint.Note, 60))
	}
	return out, dir
}
