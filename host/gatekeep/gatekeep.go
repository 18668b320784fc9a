// Package gatekeep owns the lifecycle's gate: palace.gate with the facts of
// a card's evidence and contests, then the floors no policy lifts (local
// policy file, open contest, expiry, dao_tian needing a human, secrets,
// research), and the stamping of lifecycle events. It reads through the
// store it is given, never writes, and must not import host or its jobs.
package gatekeep

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/cardview"
	"github.com/palacehq/palace/host/jobenv"
	"github.com/palacehq/palace/host/policyfile"
	"github.com/palacehq/palace/internal/hosterr"
	"github.com/palacehq/palace/policies"
	"github.com/palacehq/palace/secrets"
	"github.com/palacehq/palace/store"
)

// Keeper is what the gate needs of a palace.
type Keeper struct {
	jobenv.Env
}

// Result is the gate's answer plus which policy gave it.
type Result struct {
	CardID   string            `json:"card_id"`
	Action   string            `json:"action"`
	Target   string            `json:"target"`
	Allow    bool              `json:"allow"`
	Reasons  []string          `json:"reasons"`
	Missing  map[string]int    `json:"missing"`
	Counts   domain.RoleCounts `json:"counts"`
	Reviewer policies.Reviewer `json:"reviewer"`
	Policy   policies.Decision `json:"policy"`
	// SourceRefs are the distinct source_refs per role the gate saw.
	SourceRefs policies.SourceRefs `json:"source_refs"`
	// Contest is the card's open contest, as the gate saw it.
	Contest policies.GateContest `json:"contest"`
	// AllowLocalPolicy is set when a local (untracked or modified) repo
	// policy was allowed to decide.
	AllowLocalPolicy bool `json:"allow_local_policy,omitempty"`
	// Source is where the change came from, for one from a card file.
	Source *policies.GateSource `json:"source,omitempty"`
}

// Stamp is the keeper's clock in the palace's one time format.
func (k *Keeper) Stamp() string { return store.FormatTime(k.Now()) }

// ActorType is the type of who acts: the mode.
func (k *Keeper) ActorType() domain.ActorType { return domain.ActorType(k.Mode) }

// NewEvent stamps e as the keeper's actor writing it now for cardID.
func (k *Keeper) NewEvent(cardID string, e domain.Event) domain.Event {
	e.ID = store.NewID(store.EventPrefix, k.Now())
	e.CardID = cardID
	e.Actor = k.Actor
	e.ActorType = k.ActorType()
	e.CreatedAt = k.Stamp()
	return e
}

// Reviewer is who reviews a change: in agent mode always the agent; in
// human mode the named reviewer, else the actor.
func (k *Keeper) Reviewer(name string) policies.Reviewer {
	if k.Mode == "agent" {
		return policies.Reviewer{Name: k.Actor, Type: "agent"}
	}
	return policies.Reviewer{Name: cmp.Or(name, k.Actor), Type: "human"}
}

// Evaluate runs palace.gate for action (promote, publish, resolve) of c to
// target and then the Go floors, with the reviewer given as is (a card file
// names the reviewer of its last lifecycle change). It writes nothing.
func (k *Keeper) Evaluate(ctx context.Context, c domain.Card, links []domain.Link, contests []store.Contest, action, target string, reviewer policies.Reviewer, allowLocal bool) Result {
	return k.EvaluateFrom(ctx, c, links, contests, action, target, reviewer, allowLocal, policies.GateSource{Channel: policies.SourceLocal})
}

// EvaluateFrom is Evaluate for a change that comes from source (a card
// file an import reads from git, say): the policy sees where it comes from.
func (k *Keeper) EvaluateFrom(ctx context.Context, c domain.Card, links []domain.Link, contests []store.Contest, action, target string, reviewer policies.Reviewer, allowLocal bool, source policies.GateSource) Result {
	facts := factsOf(links, contests)
	in := policies.GateInput{
		Action: action,
		Target: target,
		Card: policies.GateCard{
			ID: c.ID, Tier: string(c.Tier), Status: string(c.Status), Domain: string(c.Domain), Field: c.Field,
			Anchor: cardview.RefOf(ctx, k.Store, k.Loc, c.AnchorID).Kind, Statement: c.Statement, Persistence: string(c.Persistence),
			Scope: policies.CardScope{Paths: c.Scope.Paths, Languages: c.Scope.Languages, Fields: c.Scope.Fields},
		},
		Counts:     facts.counts,
		AllCounts:  facts.all,
		SourceRefs: facts.refs,
		Newest:     facts.newest,
		Contest:    facts.contest,
		Reviewer:   reviewer,
		Mode:       k.Mode,
		Source:     source,
	}
	res := Result{CardID: c.ID, Action: action, Target: target, Counts: facts.counts, Reviewer: reviewer,
		SourceRefs: facts.refs, Contest: facts.contest, AllowLocalPolicy: allowLocal}
	if source.Channel == policies.SourceCardFile {
		res.Source = &source
	}
	set, err := k.Policies(ctx)
	if err != nil {
		res.Reasons = []string{fmt.Sprintf("policy palace.gate could not load, denying: %v", err)}
		res.Missing = map[string]int{}
		res.Policy = policies.Decision{Point: policies.Gate, Error: err.Error()}
		return res
	}
	out, d := set.Gate(ctx, in)
	res.Allow, res.Reasons, res.Missing, res.Policy = out.Allow, out.Reasons, out.Missing, d
	// Lifecycle decisions ask git every time, uncached.
	policyfile.Stamp(ctx, &res.Policy)
	// Floors, checked after the policy: no policy lifts them.
	var floors []string
	if f := policyfile.Floor(res.Policy, allowLocal); f != "" {
		floors = append(floors, f)
	}
	if action != string(domain.ActionResolve) && facts.contest.Contested {
		floors = append(floors, fmt.Sprintf("floor: card %s is contested (%s since %s): resolve it with newer verification (`palace resolve`) or demote it first", c.ID, strings.Join(facts.contest.Kinds, ", "), facts.contest.Since))
	}
	if action == string(domain.ActionPromote) && c.ExpiresAt != "" && c.ExpiresAt <= k.Stamp() {
		floors = append(floors, fmt.Sprintf("floor: card %s expired %s: an expired card cannot become authoritative; distill a fresh one from current evidence", c.ID, c.ExpiresAt))
	}
	if action == string(domain.ActionPromote) && c.Tier == domain.TierDaoTian && target == string(domain.StatusCanonical) && reviewer.Type != "human" {
		floors = append(floors, "floor: dao_tian → canonical needs a human reviewer")
	}
	if f := secrets.ScanString(c.Statement + "\n" + c.Content); len(f) > 0 {
		floors = append(floors, fmt.Sprintf("floor: the card contains a secret (%s %s): an authoritative card may not; retire it and distill a redacted one", f[0].Rule, f[0].Redacted))
	}
	if action == string(domain.ActionPromote) {
		floors = append(floors, researchFloor(ctx, k.Store, c, links)...)
	}
	if len(floors) > 0 {
		if res.Allow {
			res.Reasons = nil
		}
		res.Allow = false
		res.Reasons = append(res.Reasons, floors...)
	}
	return res
}

// SecretFloor refuses text that trips the secret scanner (KindDenied, a
// reason per finding).
func SecretFloor(text string) error {
	f := secrets.ScanString(text)
	if len(f) == 0 {
		return nil
	}
	var reasons []string
	for _, x := range f {
		reasons = append(reasons, fmt.Sprintf("floor: line %d: %s %s", x.Line, x.Rule, x.Redacted))
	}
	return hosterr.Denied("the card contains a secret and cannot become authoritative", reasons)
}

// PromoteTarget is the status a promotion aims at: target when promoted or
// canonical, else canonical for dao_tian and promoted otherwise.
func PromoteTarget(c domain.Card, target string) (domain.Status, error) {
	if target == "" {
		if c.Tier == domain.TierDaoTian {
			return domain.StatusCanonical, nil
		}
		return domain.StatusPromoted, nil
	}
	if t := domain.Status(target); t == domain.StatusPromoted || t == domain.StatusCanonical {
		return t, nil
	}
	return "", hosterr.Invalid("target", "--target %q is not a promotion target: use promoted or canonical", target)
}

// CanPromote says whether a card of status from may be promoted to to.
func CanPromote(from, to domain.Status) bool {
	switch to {
	case domain.StatusPromoted:
		return from == domain.StatusCandidate || from == domain.StatusDemoted
	case domain.StatusCanonical:
		return from == domain.StatusCandidate || from == domain.StatusPromoted || from == domain.StatusDemoted
	}
	return false
}

// Record is the decision JSON an event keeps: the policy's output and
// which policy, by hash, gave it.
func Record(g Result) map[string]any {
	m := map[string]any{
		"allow": g.Allow, "reasons": g.Reasons, "missing": g.Missing,
		"counts": g.Counts, "reviewer": g.Reviewer, "policy": g.Policy,
		"source_refs": g.SourceRefs, "allow_local_policy": g.AllowLocalPolicy,
	}
	if g.Source != nil {
		m["source"] = g.Source
	}
	return m
}

// facts are what the gate input says about a card's evidence.
type facts struct {
	counts, all domain.RoleCounts
	refs        policies.SourceRefs
	newest      policies.RoleTimes
	contest     policies.GateContest
}

// factsOf counts a card's distinct evidence per role (a duplicate as its
// original, each in its first role): teaching only human provenance written
// in human mode, counterexample only those no newer verification outweighs.
func factsOf(links []domain.Link, contests []store.Contest) facts {
	var f facts
	distinct := domain.DistinctLinks(links)
	refs := map[domain.Role]map[string]bool{}
	newest := map[domain.Role]string{}
	for _, l := range distinct {
		if l.EvidenceAt > newest[l.Role] {
			newest[l.Role] = l.EvidenceAt
		}
		if l.SourceRef != "" {
			if refs[l.Role] == nil {
				refs[l.Role] = map[string]bool{}
			}
			refs[l.Role][l.SourceRef] = true
		}
		switch l.Role {
		case domain.RoleSupporting:
			f.all.Supporting++
		case domain.RoleVerification:
			f.all.Verification++
		case domain.RoleTeaching:
			f.all.Teaching++
			if l.Provenance == "human" && l.ActorType == "human" {
				f.counts.Teaching++
			}
		case domain.RoleCounterexample:
			f.all.Counterexample++
		}
	}
	for _, l := range distinct {
		if l.Role == domain.RoleCounterexample && !(newest[domain.RoleVerification] > l.EvidenceAt) {
			f.counts.Counterexample++
		}
	}
	f.counts.Supporting, f.counts.Verification = f.all.Supporting, f.all.Verification
	list := func(role domain.Role) []string {
		out := make([]string, 0, len(refs[role]))
		for r := range refs[role] {
			out = append(out, r)
		}
		slices.Sort(out)
		return out
	}
	f.refs = policies.SourceRefs{Supporting: list(domain.RoleSupporting), Verification: list(domain.RoleVerification),
		Teaching: list(domain.RoleTeaching), Counterexample: list(domain.RoleCounterexample)}
	f.newest = policies.RoleTimes{Supporting: newest[domain.RoleSupporting], Verification: newest[domain.RoleVerification],
		Teaching: newest[domain.RoleTeaching], Counterexample: newest[domain.RoleCounterexample]}
	f.contest = cardview.GateContest(contests)
	return f
}

// ModeEnv is the environment variable an agent's environment sets to
// "agent".
const ModeEnv = "PALACE_MODE"

// RequireHuman refuses op in agent mode (KindMode).
func (k *Keeper) RequireHuman(op string) error {
	if k.Mode != "agent" {
		return nil
	}
	return &hosterr.Error{Kind: hosterr.KindMode, Msg: fmt.Sprintf("%s is refused in agent mode: only a human may %s (mode is fixed by --mode/%s=agent)", op, op, ModeEnv)}
}
