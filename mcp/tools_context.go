package mcp

import (
	"context"

	"github.com/palacehq/palace/host/pack"
)

func init() {
	extraTools = append(extraTools, func(s *Server) []tool { return []tool{s.contextTool()} })
}

// contextArgs mirror the flags of `palace context`.
type contextArgs struct {
	Query             string   `json:"query,omitempty" jsonschema:"What you are about to do, in a few words (the task, the error, the API). Ranks the cards by relevance."`
	File              string   `json:"file,omitempty" jsonschema:"The file you work on, relative to the workspace or absolute. Cards scoped to paths and languages match it."`
	Language          string   `json:"language,omitempty" jsonschema:"Language id of the work (go, python, typescript…). Defaults to one derived from file."`
	Field             string   `json:"field,omitempty" jsonschema:"Knowledge field of the task (build, testing, storage…)."`
	Intents           []string `json:"intents,omitempty" jsonschema:"What you are doing: debug, refactor, test, release, review…; wakes cards with those intents."`
	Tools             []string `json:"tools,omitempty" jsonschema:"Tools you will use (git, make, psql…); wakes cards about them."`
	Instructions      []string `json:"instructions,omitempty" jsonschema:"Transient instructions for this request only (a user's constraint such as 'no markdown in the answer'): rendered first, never stored."`
	Budget            int      `json:"budget,omitempty" jsonschema:"Size limit of the rendered pack in characters. Absent or 0 means the default, 8000."`
	DaoTianLimit      *int     `json:"dao_tian_limit,omitempty" jsonschema:"At most this many dao_tian (universal law) items. Defaults to 1; 0 leaves them out."`
	IncludeEvidence   bool     `json:"include_evidence,omitempty" jsonschema:"Add up to five raw evidence rows matching the query."`
	IncludeCandidates bool     `json:"include_candidates,omitempty" jsonschema:"Let candidate (not yet promoted) cards compete too, labelled as not authoritative."`
	AllRepos          bool     `json:"all_repos,omitempty" jsonschema:"Also pull cards of every other repository, each labelled with its origin. Only when the user asks for cross-project knowledge; in agent mode only where a person allowed it for this checkout (palace workspace allow-all-repos), a tool error otherwise."`
	Explain           bool     `json:"explain,omitempty" jsonschema:"Add why-lines and salience breakdowns for skipped cards to the structured result."`
	DryRun            bool     `json:"dry_run,omitempty" jsonschema:"Write nothing: no lane telemetry. Use it to inspect, not when you will act on the pack."`
	RequestID         string   `json:"request_id,omitempty" jsonschema:"Fix the request id (tests and reproductions). Defaults to a new id."`
}

func (s *Server) contextTool() tool {
	return newTool(ToolContext, "Get the context pack",
		`Get palace's context pack for the task at hand: the authoritative knowledge cards that apply to this worktree, its repository and global memory (never another repository's unless all_repos), for the file and query you give, in lanes under a character budget, each card with its citations.

Call it at the start of every task, and again when you move to a different file or subtask. The text result is the Markdown to read and follow; the structured result adds the ids, citations, why each card applies, and what was trimmed. With no query, file, field, intent or tool (a session start) it returns the memory's wake-up layer: its laws, foundations and most valued cards. An empty pack says what memory exists and why none applied. Never record the pack back with palace_record. Unless dry_run, it logs which cards were shown (lane telemetry), nothing else.`,
		hints{}, nil,
		func(ctx context.Context, a contextArgs) (output, error) {
			pack, err := s.h.Pack().Context(ctx, pack.ContextRequest{Query: a.Query, File: a.File, Language: a.Language, Field: a.Field, Intents: a.Intents, Tools: a.Tools, Instructions: a.Instructions, Budget: a.Budget, DaoTianLimit: a.DaoTianLimit, IncludeEvidence: a.IncludeEvidence, IncludeCandidates: a.IncludeCandidates, AllRepos: a.AllRepos, Explain: a.Explain, DryRun: a.DryRun, RequestID: a.RequestID, Fetch: pack.FetchByMCPTool})
			if err != nil {
				return output{}, err
			}
			return output{Value: pack, Text: pack.Rendered}, nil
		}).returning(outputOf[pack.Pack]("The pack: rendered Markdown, its items with citations and why each applies, the selection and the budget."))
}
