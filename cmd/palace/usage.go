package main

import (
	"github.com/spf13/cobra"
)

// cobra reports every mistake in how palace was called — an unknown
// command, the wrong number of arguments, a missing required flag, flags of
// a group used apart — as a plain error with no type to match. Rather than
// read its messages, palace wraps each source of them once, where cobra
// calls out to it, into a usageError (exit 2). Flag parsing errors come
// through the root's FlagErrorFunc (newRoot); an unknown command at the
// root through findCommand.

// markUsageErrors wraps the argument validators of cmd and the commands
// below it, and checks required flags and flag groups before cobra does,
// so each of those errors is a usageError.
func markUsageErrors(cmd *cobra.Command) {
	if args := cmd.Args; args != nil {
		cmd.Args = func(cmd *cobra.Command, a []string) error {
			if err := args(cmd, a); err != nil {
				return usageError{argsError(cmd, a, err)}
			}
			return nil
		}
	}
	pre := cmd.PreRunE
	cmd.PreRunE = func(cmd *cobra.Command, a []string) error {
		// cobra runs the same checks right after PreRunE; they pass then.
		if err := cmd.ValidateRequiredFlags(); err != nil {
			return asUsage(err)
		}
		if err := cmd.ValidateFlagGroups(); err != nil {
			return asUsage(err)
		}
		if pre != nil {
			return pre(cmd, a)
		}
		return nil
	}
	for _, c := range cmd.Commands() {
		markUsageErrors(c)
	}
}

// findCommand resolves args the way cobra's Execute will, first, so that an
// unknown command at the root — which cobra reports before any hook of ours
// runs — is a usageError too. Shell completion requests are cobra's own
// hidden commands, added only during Execute, and are left to it.
func findCommand(root *cobra.Command, args []string) (*cobra.Command, error) {
	if len(args) > 0 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd) {
		return nil, nil
	}
	root.InitDefaultHelpCmd()
	cmd, _, err := root.Find(args)
	return cmd, asUsage(err)
}

func asUsage(err error) error {
	if err == nil {
		return nil
	}
	return usageError{err.Error()}
}
