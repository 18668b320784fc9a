package mcp

import (
	"context"

	"github.com/palacehq/palace/mailbox"
)

func init() {
	extraTools = append(extraTools, func(s *Server) []tool { return []tool{s.mailboxFileTool()} })
}

// mailboxFileArgs are a letter's fields but ts, which the
// server stamps.
type mailboxFileArgs struct {
	Class    string   `json:"class" jsonschema:"What kind of report: tool_error, missing_doc, wrong_doc, unexpected_behavior, feature_request, question… (a short snake_case word)."`
	What     string   `json:"what" jsonschema:"What happened, in one or two sentences a maintainer can act on."`
	Repo     string   `json:"repo,omitempty" jsonschema:"The project the letter is about: a path or a remote such as github.com/org/name. Omit for a letter about no project (it goes to the global box)."`
	Tool     string   `json:"tool,omitempty" jsonschema:"The tool or command involved."`
	Expected string   `json:"expected,omitempty" jsonschema:"What you expected instead."`
	Snippet  string   `json:"snippet,omitempty" jsonschema:"A short excerpt: the error message, the command line. Never a secret."`
	Kind     string   `json:"kind,omitempty" jsonschema:"triage or receipt closes the letters listed in answers; any other value is a plain reply. Leave it out for a new report."`
	Answers  []string `json:"answers,omitempty" jsonschema:"Ids (12 hex characters) of the letters this one replies to."`
	External string   `json:"external,omitempty" jsonschema:"Where the report is tracked outside palace (an issue URL, a ticket id); marks it external."`
	Agent    string   `json:"agent,omitempty" jsonschema:"Who writes the letter. Defaults to this server's agent name ($PALACE_AGENT)."`
}

func (s *Server) mailboxFileTool() tool {
	return newTool(ToolMailboxFile, "File a field report",
		`File a field report (a letter) in palace's mailbox when something in your environment fails you: a tool that errors, a doc that is missing or wrong, a behaviour that contradicts what you were told. The letter is appended to the spool and later distributed to the named project's box, where humans triage it.

The letter is scanned for secrets first: one that contains a secret is refused and nothing is written. Filing never changes memory (evidence or cards); use palace_record for what you learned. Returns the letter's id.`,
		hints{}, nil,
		func(ctx context.Context, a mailboxFileArgs) (output, error) {
			l := mailbox.Letter{Agent: a.Agent, Class: a.Class, What: a.What, Repo: a.Repo, Tool: a.Tool,
				Expected: a.Expected, Snippet: a.Snippet, Kind: a.Kind, Answers: a.Answers}
			if a.External != "" {
				l.External = mailbox.External{Set: true, Ref: a.External}
			}
			filed, err := s.h.Mail().File(ctx, l)
			return output{Value: filed}, err
		}).returning(outputOf[mailbox.Filed]("The filed letter's id and where it waits."))
}
