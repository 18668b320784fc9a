package mcp

import (
	"context"

	"github.com/palacehq/palace/host"
)

// ToolVerify records a verification of a card against the code as it is
// now (palace verify).
const ToolVerify = "palace_verify"

func init() {
	extraTools = append(extraTools, func(s *Server) []tool { return []tool{s.verifyTool()} })
}

type verifyArgs struct {
	ID       string   `json:"id" jsonschema:"The card id (kc_…) to verify against the code."`
	Evidence []string `json:"evidence,omitempty" jsonschema:"Evidence ids (ev_…) whose cited code to verify against instead of the card's own citations: evidence you recorded (palace_record with source_ref path#L10-L24) where the code moved to."`
	Note     string   `json:"note,omitempty" jsonschema:"What you checked, one line."`
}

func (s *Server) verifyTool() tool {
	return newTool(ToolVerify, "Verify a card against the code",
		`Re-check a card against the code it cites, as that code is now. Use it when a context pack marks a card stale (the code its evidence cites changed): read the code, and when the card still holds, call this. palace records what the code says now as verification evidence and links it, so the card is fresh again; moved lines and renamed files are followed.

It never changes a card's status. When the cited code is gone (a deleted file, removed lines), it fails naming it: record evidence citing where the code is now and pass its id in evidence, or tell the user the card may need demoting.`,
		hints{idempotent: true}, nil,
		func(ctx context.Context, a verifyArgs) (output, error) {
			res, err := s.h.Verify(ctx, a.ID, host.VerifyRequest{Evidence: a.Evidence, Note: a.Note})
			return output{Value: res}, err
		}).returning(outputOf[host.VerifyResult]("The verification recorded and the card after it."))
}
