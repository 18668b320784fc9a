package mcp

import (
	"context"
	"encoding/json"
	"path/filepath"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/adoption"
	"github.com/palacehq/palace/host/research"
	"github.com/palacehq/palace/mailbox"
)

type feedbackArgs struct {
	Signal        string `json:"signal" jsonschema:"used: a card from the pack helped and you acted on it. accepted: the user accepted work that followed it. rejected: it did not fit this task (say why in note). rollback: advice from it had to be undone. miss: you needed knowledge the pack did not give (note says what). contradiction: what you saw contradicts the card (evidence_id: the evidence you recorded). neutral: seen, made no difference."`
	CardID        string `json:"card_id,omitempty" jsonschema:"The card (kc_…) the signal is about, from the pack's items. Required except for a miss; for a miss, the card that should have been in the pack, if you found one."`
	RequestID     string `json:"request_id,omitempty" jsonschema:"The pack's request_id (rq_…): the signal then counts for requests like that one. Always pass it when the signal follows a pack."`
	Note          string `json:"note,omitempty" jsonschema:"One sentence on what happened: why it was rejected, what you needed, what contradicted it."`
	Query         string `json:"query,omitempty" jsonschema:"What you asked for or needed, when there is no request_id."`
	Field         string `json:"field,omitempty" jsonschema:"The topic, for a miss that names no card. Defaults to the card's or the request's field."`
	EvidenceID    string `json:"evidence_id,omitempty" jsonschema:"For a contradiction: the id (ev_…) of the evidence you recorded with palace_record that contradicts the card."`
	AllowWarnings bool   `json:"allow_warnings,omitempty" jsonschema:"Record even when the check finds the signal thin (no note, no request). Prefer adding the note."`
	CheckOnly     bool   `json:"check_only,omitempty" jsonschema:"Only check the signal; write nothing."`
}

func (s *Server) feedbackTool() tool {
	return newTool(ToolFeedback, "Say how a card or pack worked",
		`Tell palace what happened after a context pack, so the memory learns from use. Call it right after you used a card from the pack (used), when one did not fit your task (rejected, with a note), when advice from one had to be undone (rollback), when the user accepted work that followed it (accepted), when what you saw contradicts it (contradiction, with the evidence you recorded), or when you needed knowledge the pack did not give you (miss, with a note saying what). Pass the pack's request_id.

Signals are evidence, not authority: they never change a card's status or count toward a gate. used and accepted make the card rank higher for requests like this one, rejected and rollback lower (never out of the pack's inline lanes when the request is about the card); misses and contradictions go to the humans' review queue, and a contradiction contests the card only with the evidence_id of what you recorded. Name cards and evidence of this checkout only. A signal counts once per card and request (repeating it changes nothing). A signal that says nothing (no note, no request) is refused unless allow_warnings.`,
		hints{}, map[string][]string{"signal": adoption.Signals},
		func(ctx context.Context, a feedbackArgs) (output, error) {
			res, err := s.h.Adoption().Adopt(ctx, adoption.Request{Signal: a.Signal, CardID: a.CardID, RequestID: a.RequestID, Note: a.Note, Query: a.Query, Field: a.Field, EvidenceID: a.EvidenceID, AllowWarnings: a.AllowWarnings, CheckOnly: a.CheckOnly})
			return output{Value: res, Partial: res}, err
		})
}

type researchArgs struct {
	Action string          `json:"action" jsonschema:"validate: check the report against the contract. plan: what an ingest would write (dry run). ingest: write one evidence row per new finding (allowed in agent mode only when the team's palace.research policy allows it)."`
	Report json.RawMessage `json:"report,omitempty" jsonschema:"The report as a JSON object: report_id, title, sources [{id, url, title}], findings [{id, content, source, field}], optional candidate_insights [{statement, tier, field, findings}] and about (project or general). Give report or file."`
	File   string          `json:"file,omitempty" jsonschema:"Path of a report file (JSON), relative to the server's directory. Give report or file."`
	Anchor string          `json:"anchor,omitempty" jsonschema:"repo (the default), worktree or global (global only for a report whose about is general)."`
}

func (s *Server) researchTool() tool {
	return newTool(ToolResearch, "Validate or ingest a research report",
		`Bring external research into palace as evidence, never as knowledge: each finding of a report becomes one research evidence row citing its source, with a stable id (ingesting the same report again writes nothing). validate checks the report; plan returns the planned evidence ids and the report's candidate insights as palace_distill suggestions citing them, writing nothing; ingest writes. Errors name the JSON path at fault (findings[3].source).

Research never creates or promotes a card: distill a suggestion with palace_distill if it holds, and a human promotes it. By default an agent may validate and plan; ingest is for humans unless the team's palace.research policy allows agents.`,
		hints{}, map[string][]string{"action": {"validate", "plan", "ingest"}, "anchor": domain.Strings(domain.AnchorKinds)},
		func(ctx context.Context, a researchArgs) (output, error) {
			var b []byte
			name := "report"
			switch {
			case len(a.Report) > 0 && a.File != "":
				return output{}, invalidArg("report", "give report or file, not both")
			case len(a.Report) > 0:
				b = a.Report
			case a.File != "":
				p := a.File
				if !filepath.IsAbs(p) {
					p = filepath.Join(s.h.Location().Dir, p)
				}
				var err error
				if b, err = host.ReadInputFile("file", p, research.MaxReportBytes); err != nil {
					return output{}, err
				}
				name = a.File
			default:
				return output{}, invalidArg("report", "report or file is required: the report JSON object, or the path of its file")
			}
			plan, err := s.h.Research(ctx, research.Request{Report: b, Name: name, Action: a.Action, Anchor: a.Anchor})
			return output{Value: plan, Partial: plan}, err
		})
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
