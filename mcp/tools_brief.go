package mcp

import (
	"context"

	"github.com/palacehq/palace/host/pack"
)

func init() { extraTools = append(extraTools, func(s *Server) []tool { return []tool{s.briefTool()} }) }

// briefArgs mirror the flags of `palace brief`.
type briefArgs struct {
	Query             string   `json:"query,omitempty" jsonschema:"What you need to know about, in a few words (a subsystem, an error, a decision)."`
	File              string   `json:"file,omitempty" jsonschema:"The file you work on, relative to the workspace or absolute."`
	Language          string   `json:"language,omitempty" jsonschema:"Language id of the work. Defaults to one derived from file."`
	Field             string   `json:"field,omitempty" jsonschema:"Knowledge field to brief (build, testing, storage…)."`
	Intents           []string `json:"intents,omitempty" jsonschema:"What you are doing: debug, refactor, test, release, review…"`
	Tools             []string `json:"tools,omitempty" jsonschema:"Tools you will use."`
	DaoTianLimit      *int     `json:"dao_tian_limit,omitempty" jsonschema:"At most this many dao_tian cards. Defaults to 1; 0 leaves them out."`
	IncludeCandidates bool     `json:"include_candidates,omitempty" jsonschema:"Brief candidate cards too (never as key facts)."`
	AllRepos          bool     `json:"all_repos,omitempty" jsonschema:"Include every repository's cards, labelled. Only when the user asks for cross-project knowledge; in agent mode only where a person allowed it for this checkout (palace workspace allow-all-repos), a tool error otherwise."`
}

func (s *Server) briefTool() tool {
	return newTool(ToolBrief, "Get a cited brief",
		`Get a deterministic, cited brief of what palace knows about a topic here: a summary, key facts from authoritative cards with the evidence they cite, the cards with their citations, entities (commands, paths, URLs, identifiers) and unresolved items found in that evidence, reasons for doubt (counterexamples, candidates, expiring cards), and next actions with their commands. No LLM is involved: every line comes from recorded evidence or cards.

Call it before a larger piece of work or when palace_context's pack is not enough to decide; it reads more than a pack and writes nothing. Never record the brief back with palace_record.`,
		hints{readOnly: true}, nil,
		func(ctx context.Context, a briefArgs) (output, error) {
			b, err := s.h.Pack().Brief(ctx, pack.BriefRequest{Query: a.Query, File: a.File, Language: a.Language, Field: a.Field, Intents: a.Intents, Tools: a.Tools, DaoTianLimit: a.DaoTianLimit, IncludeCandidates: a.IncludeCandidates, AllRepos: a.AllRepos})
			return output{Value: b}, err
		}).returning(outputOf[pack.Brief]("The brief: key facts, next actions and what memory exists."))
}
