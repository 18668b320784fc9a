package mcp

import (
	"strings"

	"github.com/palacehq/palace/internal/lazyregexp"
)

// The host words its errors for the terminal: flags (--supporting) and
// commands (`palace record`). An MCP client has tools and arguments
// instead, so tool errors are reworded with these before they are sent.
var (
	// cliPhrases are whole hints that read better rewritten than mapped.
	cliPhrases = strings.NewReplacer(
		"pass --content TEXT, --file PATH or text on stdin", "pass the content argument",
		"at least one --supporting evidence ref is required", "at least one evidence id in argument \"supporting\" is required",
		"list them with `palace card list --all-repos`", "list them with palace_cards (action list, all_repos true)",
		"list it with `palace evidence list --all-repos`", "use an id palace_record returned",
	)
	cliCommand = lazyregexp.New("`palace ([a-z]+)(?: ([a-z]+))?([^`]*)`")
	cliFlag    = lazyregexp.New(`(^|[\s(,])--([a-z][a-z-]*)`)
	// argNames are the MCP argument names of flags whose name differs.
	argNames = map[string]string{
		"scope-path": "scope_paths", "scope-lang": "scope_languages", "scope-field": "scope_fields",
		"trigger-pattern": "trigger_patterns", "intent": "intents", "tool-need": "tool_needs", "tool": "tools",
		"tag": "tags", "evidence": "evidence_id", "instruction": "instructions",
	}
	// commandTools are the tools of the CLI commands hints name.
	commandTools = map[string]string{
		"record": ToolRecord, "distill": ToolDistill, "gate": ToolGate, "promote": ToolPromote, "demote": ToolDemote,
		"retire": ToolRetire, "publish": ToolPublish, "context": ToolContext, "brief": ToolBrief,
		"card show": ToolCards + " (action get)", "card list": ToolCards + " (action list)", "card events": ToolCards + " (action events)",
		"card link": ToolLink, "evidence show": "a card id (kc_…) instead", "audit action": ToolAuditAction, "mailbox file": ToolMailboxFile,
	}
)

// Reword rewrites a host error message for MCP clients: each `palace
// COMMAND …` hint names the tool instead, and each --flag its argument.
func Reword(msg string) string {
	msg = cliPhrases.Replace(msg)
	msg = cliCommand.ReplaceAllStringFunc(msg, func(m string) string {
		sub := cliCommand.FindStringSubmatch(m)
		if t, ok := commandTools[sub[1]+" "+sub[2]]; ok {
			return t
		}
		if t, ok := commandTools[sub[1]]; ok && sub[1] != "card" && sub[1] != "evidence" {
			return t
		}
		return m
	})
	return cliFlag.ReplaceAllStringFunc(msg, func(m string) string {
		sub := cliFlag.FindStringSubmatch(m)
		name, ok := argNames[sub[2]]
		if !ok {
			name = strings.ReplaceAll(sub[2], "-", "_")
		}
		return sub[1] + name
	})
}
