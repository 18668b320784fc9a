package mcp

import (
	"context"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
)

// The human-only tools (HumanOnlyTools). Each is listed only in human
// mode; in agent mode a call is refused by modeGuard before it gets here,
// and host refuses the operation itself too: the floor does not depend on
// this package.

type promoteArgs struct {
	ID           string   `json:"id" jsonschema:"The card id (kc_…)."`
	Reason       string   `json:"reason" jsonschema:"Why the card is ready; kept in its audit trail."`
	Target       string   `json:"target,omitempty" jsonschema:"promoted or canonical. Defaults to canonical for dao_tian, promoted otherwise."`
	Reviewer     string   `json:"reviewer,omitempty" jsonschema:"The reviewer's name. Defaults to the OS user."`
	Verification []string `json:"verification,omitempty" jsonschema:"Ids of verification evidence to link first, in the same transaction."`
	AllowLocal   bool     `json:"allow_local_policy,omitempty" jsonschema:"Let a repo gate policy that git does not hold as committed (untracked or modified) decide; the event records it."`
}

func (s *Server) promoteTool() tool {
	return newTool(ToolPromote, "Promote a card (human)",
		`Human mode only. Promote a card through the gate: link the verification evidence given, evaluate the gate policy and the floors, and move the card to promoted or canonical, all in one transaction. A denial changes nothing and returns the gate's reasons.

Only call this when the human you work with has asked for this promotion.`,
		hints{idempotent: false}, map[string][]string{"target": {string(domain.StatusPromoted), string(domain.StatusCanonical)}},
		func(ctx context.Context, a promoteArgs) (output, error) {
			res, err := s.h.Promote(ctx, a.ID, host.PromoteRequest{Reason: a.Reason, Target: a.Target, Reviewer: a.Reviewer, Verification: a.Verification, AllowLocalPolicy: a.AllowLocal})
			if err != nil {
				return output{Partial: res.Gate}, err
			}
			return output{Value: res}, nil
		}).returning(changeSchema())
}

type demoteArgs struct {
	ID             string   `json:"id" jsonschema:"The card id (kc_…)."`
	Reason         string   `json:"reason" jsonschema:"What the counterexample shows."`
	Counterexample []string `json:"counterexample" jsonschema:"Ids of the evidence that contradicts the card. At least one."`
	Target         string   `json:"target,omitempty" jsonschema:"demoted (the default) or retired."`
}

func (s *Server) demoteTool() tool {
	return newTool(ToolDemote, "Demote a card (human)",
		`Human mode only. Demote a card on counterexample evidence: link the counterexamples and move the card to demoted (or retired) in one transaction. The card stays in the audit trail.`,
		hints{destructive: true}, map[string][]string{"target": {string(domain.StatusDemoted), string(domain.StatusRetired)}},
		func(ctx context.Context, a demoteArgs) (output, error) {
			res, err := s.h.Demote(ctx, a.ID, host.DemoteRequest{Reason: a.Reason, Counterexample: a.Counterexample, Target: a.Target})
			return changeOutput(res, err)
		}).returning(changeSchema())
}

type retireArgs struct {
	ID     string `json:"id" jsonschema:"The card id (kc_…)."`
	Reason string `json:"reason" jsonschema:"Why the card is retired."`
}

func (s *Server) retireTool() tool {
	return newTool(ToolRetire, "Retire a card (human)",
		`Human mode only. Retire a card that no longer holds: it leaves every context pack and can never become authoritative again, but it stays in the palace with its evidence and audit trail. Use palace_demote instead when evidence contradicts the card.`,
		hints{destructive: true}, nil,
		func(ctx context.Context, a retireArgs) (output, error) {
			res, err := s.h.Retire(ctx, a.ID, a.Reason)
			return changeOutput(res, err)
		}).returning(changeSchema())
}

type publishArgs struct {
	ID         string `json:"id" jsonschema:"The card id (kc_…) of an authoritative card."`
	To         string `json:"to" jsonschema:"repo (from a worktree card) or global (from a repo card): one step outward."`
	Reason     string `json:"reason" jsonschema:"Why the card holds beyond its anchor."`
	Reviewer   string `json:"reviewer,omitempty" jsonschema:"The reviewer's name. Defaults to the OS user."`
	AllowLocal bool   `json:"allow_local_policy,omitempty" jsonschema:"Let a repo gate policy that git does not hold as committed (untracked or modified) decide; the event records it."`
}

func (s *Server) publishTool() tool {
	return newTool(ToolPublish, "Publish a card outward (human)",
		`Human mode only. Copy an authoritative card one anchor outward (worktree → repo → global) with its links and provenance; the original stays, stamped with the copy's id. The gate's publish action decides.`,
		hints{}, map[string][]string{"to": {"repo", "global"}},
		func(ctx context.Context, a publishArgs) (output, error) {
			res, err := s.h.Publish(ctx, a.ID, host.PublishRequest{To: a.To, Reason: a.Reason, Reviewer: a.Reviewer, AllowLocalPolicy: a.AllowLocal})
			if err != nil {
				return output{Partial: res.Gate}, err
			}
			return output{Value: res}, nil
		}).returning(outputOf[host.PublishResult]("The published copy, the original and the gate's decision."))
}

type resolveArgs struct {
	ID           string   `json:"id" jsonschema:"The contested card's id (kc_…)."`
	Verification []string `json:"verification" jsonschema:"Ids of verification evidence newer than what contested the card; linked first, in the same transaction. At least one."`
	Reason       string   `json:"reason" jsonschema:"Why the newer verification outweighs the contradiction."`
	Reviewer     string   `json:"reviewer,omitempty" jsonschema:"The reviewer's name. Defaults to the OS user."`
	AllowLocal   bool     `json:"allow_local_policy,omitempty" jsonschema:"Let a repo gate policy that git does not hold as committed (untracked or modified) decide; the event records it."`
}

func (s *Server) resolveTool() tool {
	return newTool(ToolResolve, "Resolve a contested card (human)",
		`Human mode only. Answer a contest (a counterexample or a contradiction against an authoritative card) with newer verification: link the verification evidence given, ask the gate's resolve action (by default it needs verification recorded after what contested the card), and on allow close the contest so the card returns to its lanes. A denial changes nothing and returns the gate's reasons. When the contradiction holds, use palace_demote instead.

Only call this when the human you work with has asked for it.`,
		hints{}, nil,
		func(ctx context.Context, a resolveArgs) (output, error) {
			res, err := s.h.Resolve(ctx, a.ID, host.ResolveRequest{Verification: a.Verification, Reason: a.Reason, Reviewer: a.Reviewer, AllowLocalPolicy: a.AllowLocal})
			if err != nil {
				return output{Partial: res.Gate}, err
			}
			return output{Value: res}, nil
		}).returning(changeSchema())
}

// changeSchema is the output schema of promote, demote and retire.
// It is built when a server starts, not at package initialization, which
// every palace process pays.
var changeSchema = sync.OnceValue(func() *jsonschema.Schema {
	return outputOf[host.ChangeResult]("The changed card, the event and the gate's decision.")
})

// changeOutput is a demote or retire result; only a success has one.
func changeOutput(res host.ChangeResult, err error) (output, error) {
	if err != nil {
		return output{}, err
	}
	return output{Value: res}, nil
}
