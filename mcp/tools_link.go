package mcp

import (
	"context"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
)

// ToolLink adds evidence to an existing card.
const ToolLink = "palace_link"

func init() { extraTools = append(extraTools, func(s *Server) []tool { return []tool{s.linkTool()} }) }

type linkArgs struct {
	ID         string `json:"id" jsonschema:"The card id (kc_…) to add evidence to."`
	Role       string `json:"role" jsonschema:"What the evidence does for the card: supporting (it backs the claim), verification (you re-checked the claim and it held), teaching (a human taught it) or counterexample (it contradicts or limits the claim)."`
	EvidenceID string `json:"evidence_id" jsonschema:"The evidence id (ev_…) from palace_record. Links point at evidence only, never at cards."`
	Note       string `json:"note,omitempty" jsonschema:"A short note on why this evidence plays this role."`
}

func (s *Server) linkTool() tool {
	return newTool(ToolLink, "Link evidence to a card",
		`Link recorded evidence to an existing knowledge card in a role. Use it when you verify a candidate card (role verification), find more support for it (supporting), or find a case where it does not hold (counterexample) — then palace_gate tells whether the card now meets its gate.

It never changes a card's status: only a human promotes or demotes. Linking the same evidence in the same role twice changes nothing. Record the evidence first with palace_record.`,
		hints{idempotent: true}, map[string][]string{"role": domain.Strings(domain.Roles)},
		func(ctx context.Context, a linkArgs) (output, error) {
			res, err := s.h.Link(ctx, a.ID, host.LinkRequest{Role: a.Role, EvidenceID: a.EvidenceID, Note: a.Note})
			return output{Value: res}, err
		}).returning(outputOf[host.LinkResult]("The link and the card's evidence counts."))
}
