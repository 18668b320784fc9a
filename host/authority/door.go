// Package authority is the one door through which a card's authority
// changes (status, tier, statement, content, scope, triggers, persistence,
// anchor, links, contests), whoever asks. A change is decided by the gate
// (through host/gatekeep), by a person in human mode, or by a lifecycle rule
// for what carries no authority, and the decision is written in the event
// that records it. Only this package calls store.WriteCards
// (internal/archtest); it writes through the transaction it is given and
// must not import host or the jobs above it.
package authority

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/palacehq/palace/anchor"
	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/cardview"
	"github.com/palacehq/palace/host/gatekeep"
	"github.com/palacehq/palace/internal/hosterr"
	"github.com/palacehq/palace/policies"
	"github.com/palacehq/palace/store"
)

// Door decides and writes changes to cards for one palace and workspace.
type Door struct {
	gate *gatekeep.Keeper
	loc  anchor.Location
	// ensureAnchor writes the anchor of a kind at loc, with its parents.
	ensureAnchor func(context.Context, *store.Tx, domain.AnchorKind) (store.Anchor, error)
}

// New is the door of the palace k judges for, writing anchors with
// ensureAnchor (publish needs the outer anchor).
func New(k *gatekeep.Keeper, ensureAnchor func(context.Context, *store.Tx, domain.AnchorKind) (store.Anchor, error)) *Door {
	return &Door{gate: k, loc: k.Loc, ensureAnchor: ensureAnchor}
}

// Op is what a change does.
type Op string

const (
	// OpCreate writes a new candidate (distill, a rule-file import).
	OpCreate Op = "create"
	// OpDirect writes a new authoritative card without the gate: a
	// person's decision (human mode only), audited as direct_write.
	OpDirect Op = "direct_write"
	// OpPromote raises a card to promoted or canonical: the gate decides.
	OpPromote Op = Op(domain.ActionPromote)
	// OpDemote lowers a card to demoted or retired on counterexample
	// evidence: a person decides.
	OpDemote Op = Op(domain.ActionDemote)
	// OpRetire ends a card's active life: a person decides.
	OpRetire Op = Op(domain.ActionRetire)
	// OpExpire retires a candidate past its age or expiry: a rule.
	OpExpire Op = "expire"
	// OpLink adds an evidence link (a counterexample contests an
	// authoritative card): a rule.
	OpLink Op = "link"
	// OpContest contests an authoritative card on evidence: a rule.
	OpContest Op = "contest"
	// OpResolve closes a card's contests on newer verification: the gate.
	OpResolve Op = Op(domain.ActionResolve)
	// OpPublish copies a card one anchor outward: the gate.
	OpPublish Op = Op(domain.ActionPublish)
	// OpGovern changes a card's governed attributes (scope, persistence,
	// render preference, dates): a person decides.
	OpGovern Op = "govern"
)

// Refs are evidence ids to link in one role.
type Refs struct {
	Role domain.Role
	IDs  []string
}

// Contest says what contradicts a card.
type Contest struct {
	// Kind is counterexample, contradiction, witness_superseded or another
	// short word naming what contradicts the card.
	Kind string
	// Reason says what contradicts it.
	Reason string
	// EvidenceID is the contradicting evidence. A contest needs evidence,
	// except witness_superseded, whose Source is the original card.
	EvidenceID string
	// Source names what raised the contest (a signal id, a card).
	Source string
}

// The contest kinds palace itself opens.
const (
	ContestCounterexample    = string(domain.RoleCounterexample)
	ContestContradiction     = "contradiction"
	ContestWitnessSuperseded = "witness_superseded"
)

// Change is one proposed change to a card.
type Change struct {
	Op Op
	// CardID is the card changed (every op but create and direct write).
	CardID string
	// Card is the new card of create and direct write, its anchor set.
	Card *domain.Card
	// Refs are evidence to link, by role.
	Refs []Refs
	// Note is a link's note (link).
	Note string
	// Target is promote's status ("" picks by tier), demote's, or
	// publish's anchor kind.
	Target string
	// Attrs are govern's new attributes; From and To describe the change
	// for the event.
	Attrs    *store.CardAttrs
	From, To string
	// Contest is the contest of OpContest.
	Contest Contest
	// Supersedes, with create and direct write, is a card of this checkout
	// the new card replaces, retired when the new card becomes
	// authoritative.
	Supersedes string
	Reason     string
	// Reviewer names the reviewer (see gatekeep.Keeper.Reviewer).
	Reviewer string
	// AllowLocalPolicy lets a repo gate policy git does not hold as
	// committed decide; the event records it.
	AllowLocalPolicy bool
	// Data is added to the event's data.
	Data map[string]any
}

// Outcome is what a change did.
type Outcome struct {
	// Card is the card as it was before the change (the new card for
	// create, direct write and publish's copy).
	Card domain.Card
	// Event is the change's own event; Events every event written.
	Event  domain.Event
	Events []domain.Event
	// Gate is the gate's answer, when the gate decided (also on a denial).
	Gate *gatekeep.Result
	// Added are the links the change added.
	Added []domain.Link
	// Contest is the event of a contest the change opened, if any.
	Contest *domain.Event
	// Closed counts the contests the change closed.
	Closed int
	// CopyID is publish's new card.
	CopyID string
}

// Apply decides ch and, when allowed, writes it with its events in tx. A
// refusal writes nothing: KindMode (a person's decision in agent mode),
// KindDenied (Outcome.Gate set) or KindInvalid.
func (d *Door) Apply(ctx context.Context, tx *store.Tx, ch Change) (Outcome, error) {
	if d.gate.Mode == "agent" {
		switch ch.Op {
		case OpDirect, OpPromote, OpDemote, OpRetire, OpResolve, OpPublish, OpGovern:
			return Outcome{}, d.gate.RequireHuman(humanOp(ch))
		}
	}
	if ch.Op == OpCreate || ch.Op == OpDirect {
		return d.create(ctx, tx, ch)
	}
	c, err := d.cardIn(ctx, tx, ch.CardID, string(ch.Op))
	if err != nil {
		return Outcome{}, err
	}
	switch ch.Op {
	case OpPromote:
		return d.promote(ctx, tx, c, ch)
	case OpDemote, OpRetire:
		return d.lower(ctx, tx, c, ch)
	case OpExpire:
		return d.expire(ctx, tx, c, ch)
	case OpLink:
		return d.link(ctx, tx, c, ch)
	case OpContest:
		return d.contestOp(ctx, tx, c, ch)
	case OpResolve:
		return d.resolve(ctx, tx, c, ch)
	case OpPublish:
		return d.publish(ctx, tx, c, ch)
	case OpGovern:
		return d.govern(ctx, tx, c, ch)
	}
	return Outcome{}, fmt.Errorf("change card %s: unknown op %q", ch.CardID, ch.Op)
}

// humanOp names ch as the mode refusal does.
func humanOp(ch Change) string {
	switch ch.Op {
	case OpDirect:
		return "distill --direct"
	case OpGovern:
		return "audit action"
	}
	return string(ch.Op)
}

// cardIn reads card id in tx for op, refusing an unknown id and a card
// anchored outside this workspace's chain.
func (d *Door) cardIn(ctx context.Context, tx *store.Tx, id, op string) (domain.Card, error) {
	c, err := tx.Card(ctx, id)
	if err != nil {
		return domain.Card{}, gatekeep.NotFound(err, "card", id)
	}
	if d.loc.KindOf(c.AnchorID) != "" {
		return c, nil
	}
	ref := cardview.RefOf(ctx, d.gate.Store, d.loc, c.AnchorID)
	return domain.Card{}, hosterr.Invalid("id", "card %s is anchored to %s %s, not to this checkout: %s it from a checkout of that repository",
		c.ID, ref.Kind, cardview.DisplayIdentity(ref), op)
}

// event is an event of cardID decided by who, stamped now.
func (d *Door) event(cardID string, who domain.DecidedBy, e domain.Event) domain.Event {
	e = d.gate.NewEvent(cardID, e)
	e.DecidedBy = who
	return e
}

// gateEvent stamps e with the gate's decision g.
func gateEvent(e domain.Event, g gatekeep.Result) domain.Event {
	e.Policy, e.PolicyHash, e.Decision = policies.Gate.Package(), g.Policy.Hash, gatekeep.EventData(gatekeep.Record(g))
	return e
}

// write writes ws and fills o with the events, the last being the
// change's own unless o.Event was picked by the caller (own >= 0).
func write(ctx context.Context, tx *store.Tx, o *Outcome, own int, ws []store.CardWrite) error {
	done, err := tx.WriteCards(ctx, ws)
	if err != nil {
		return err
	}
	for _, w := range done {
		o.Events = append(o.Events, w.Event)
		o.Closed += w.Closed
	}
	if own < 0 {
		own = len(done) - 1
	}
	o.Event = done[own].Event
	return nil
}

func data(extra map[string]any, kv ...any) []byte {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	maps.Copy(m, extra)
	return gatekeep.EventData(m)
}

// create writes a new candidate or, for a direct write, an authoritative
// card, with its links; one written over a counterexample starts contested.
func (d *Door) create(ctx context.Context, tx *store.Tx, ch Change) (Outcome, error) {
	c := *ch.Card
	switch {
	case ch.Op == OpCreate && c.Status != domain.StatusCandidate:
		return Outcome{}, hosterr.Invalid("status", "a new card is a candidate: it becomes authoritative through the gate (palace promote)")
	case ch.Op == OpDirect && !c.Status.Authoritative():
		return Outcome{}, hosterr.Invalid("status", "--direct writes an authoritative card: use --status %s", strings.Join(domain.Strings(domain.AuthoritativeStatuses()), " or "))
	}
	if ch.Op == OpDirect {
		if err := gatekeep.SecretFloor(c.Statement + "\n" + c.Content); err != nil {
			return Outcome{}, err
		}
	}
	var old domain.Card
	if ch.Supersedes != "" {
		var err error
		if old, err = d.cardIn(ctx, tx, ch.Supersedes, "supersede"); err != nil {
			return Outcome{}, err
		}
		if old.Status == domain.StatusRetired {
			return Outcome{}, hosterr.Invalid("from", "card %s is retired: there is nothing left to supersede", old.ID)
		}
	}
	if first, dup, err := tx.CardByStatement(ctx, c.AnchorID, c.StatementNorm, domain.LiveStatuses()); err != nil {
		return Outcome{}, err
	} else if dup && first.ID != ch.Supersedes {
		return Outcome{}, hosterr.Invalid("statement", "a %s card with the same statement exists at this anchor: %s (%q); link more evidence to it instead", first.Status, first.ID, first.Statement)
	}
	links, err := d.checkRefs(ctx, tx, c.ID, ch.Refs)
	if err != nil {
		return Outcome{}, err
	}
	if err := d.checkOneRole(ctx, tx, c.ID, links); err != nil {
		return Outcome{}, err
	}
	extra := ch.Data
	if ch.Supersedes != "" {
		extra = map[string]any{"supersedes": ch.Supersedes}
		maps.Copy(extra, ch.Data)
	}
	ev := domain.Event{Type: domain.EventCreated, ToStatus: c.Status, Reason: ch.Reason, Data: data(extra, "links", gatekeep.LinkSummary(links))}
	who := domain.DecidedByRule
	if ch.Op == OpDirect {
		ev.Type, who = domain.EventDirectWrite, domain.DecidedByHuman
		ev.Reason = cmp.Or(ch.Reason, "direct write by "+d.gate.Actor+", gate bypassed")
	}
	ws := []store.CardWrite{{Insert: &c, Links: links, Supersedes: ch.Supersedes, Event: d.event(c.ID, who, ev)}}
	for _, l := range links {
		if l.Role == domain.RoleCounterexample && c.Status.Authoritative() {
			ws = append(ws, d.contestWrite(c, Contest{Kind: ContestCounterexample,
				Reason: "written authoritative over counterexample " + l.EvidenceID, EvidenceID: l.EvidenceID}))
		}
	}
	if ch.Op == OpDirect && old.ID != "" {
		// A person wrote the replacement authoritative: the old card
		// leaves with the same decision.
		rs, err := d.retireSuperseded(ctx, tx, old, c, func(e domain.Event) domain.Event { return d.event(old.ID, domain.DecidedByHuman, e) })
		if err != nil {
			return Outcome{}, err
		}
		ws = append(ws, rs...)
	}
	o := Outcome{Card: c, Added: links}
	return o, write(ctx, tx, &o, 0, ws)
}

// retireSuperseded is the writes retiring old, replaced by the now
// authoritative c, with events stamped by decide; old's copies are
// contested.
func (d *Door) retireSuperseded(ctx context.Context, tx *store.Tx, old, c domain.Card, decide func(domain.Event) domain.Event) ([]store.CardWrite, error) {
	if old.Status == domain.StatusRetired {
		return nil, nil
	}
	reason := fmt.Sprintf("superseded by %s (%s %s)", c.ID, c.Tier, c.Status)
	ev := decide(domain.Event{Type: domain.EventRetired, FromStatus: old.Status, ToStatus: domain.StatusRetired, Reason: reason,
		Data: data(nil, "change", "superseded", "superseded_by", c.ID)})
	ws := []store.CardWrite{{Move: &store.StatusMove{From: old.Status, To: domain.StatusRetired}, Close: string(domain.StatusRetired), Event: ev}}
	copies, err := d.supersede(ctx, tx, old, domain.StatusRetired, reason)
	if err != nil {
		return nil, err
	}
	return append(ws, copies...), nil
}

// promote links the verification refs, asks the gate and moves the card.
func (d *Door) promote(ctx context.Context, tx *store.Tx, c domain.Card, ch Change) (Outcome, error) {
	o := Outcome{Card: c}
	target, err := gatekeep.PromoteTarget(c, ch.Target)
	if err != nil {
		return o, err
	}
	if !gatekeep.CanPromote(c.Status, target) {
		return o, hosterr.Invalid("target", "card %s is %s and cannot move to %s", c.ID, c.Status, target)
	}
	// The links are written first, so the gate counts them; a denial
	// rolls the transaction back with them.
	if err := d.linkFirst(ctx, tx, &o, c.ID, ch); err != nil {
		return o, err
	}
	g, err := d.ask(ctx, tx, c, string(domain.ActionPromote), string(target), ch)
	o.Gate = &g
	if err != nil {
		return o, err
	}
	ev := domain.Event{Type: domain.EventPromoted, FromStatus: c.Status, ToStatus: target, Reason: ch.Reason}
	if g.Policy.FileState != "" {
		ev.Data = data(ch.Data, "policy_file", g.Policy.File, "policy_file_state", g.Policy.FileState, "allow_local_policy", ch.AllowLocalPolicy)
	}
	ws := []store.CardWrite{{Move: &store.StatusMove{From: c.Status, To: target},
		Event: gateEvent(d.event(c.ID, domain.DecidedByGate, ev), g)}}
	// The superseded card leaves with the gate's decision, unless it
	// belongs to another checkout.
	sup, err := tx.Supersessions(ctx, []string{c.ID})
	if err != nil {
		return o, err
	}
	if oldID := sup[c.ID].Supersedes; oldID != "" {
		old, err := tx.Card(ctx, oldID)
		if err != nil {
			return o, err
		}
		if d.loc.KindOf(old.AnchorID) != "" {
			promoted := c
			promoted.Status = target
			rs, err := d.retireSuperseded(ctx, tx, old, promoted, func(e domain.Event) domain.Event {
				return gateEvent(d.event(old.ID, domain.DecidedByGate, e), g)
			})
			if err != nil {
				return o, err
			}
			ws = append(ws, rs...)
		}
	}
	return o, write(ctx, tx, &o, 0, ws)
}

// linkFirst writes the new links of ch.Refs with their linked event.
func (d *Door) linkFirst(ctx context.Context, tx *store.Tx, o *Outcome, id string, ch Change) error {
	added, err := d.newLinks(ctx, tx, id, ch.Refs)
	if err != nil || len(added) == 0 {
		return err
	}
	o.Added = added
	return write(ctx, tx, o, -1, []store.CardWrite{{Links: added, Event: d.event(id, domain.DecidedByRule, domain.Event{Type: domain.EventLinked,
		Reason: ch.Reason, Data: data(nil, "links", gatekeep.LinkSummary(added))})}})
}

// ask evaluates the gate for action on c with its links and
// open contests; a denial is KindDenied with the gate's reasons.
func (d *Door) ask(ctx context.Context, tx *store.Tx, c domain.Card, action, target string, ch Change) (gatekeep.Result, error) {
	links, err := tx.Links(ctx, c.ID)
	if err != nil {
		return gatekeep.Result{}, err
	}
	open, err := tx.OpenContests(ctx, []string{c.ID})
	if err != nil {
		return gatekeep.Result{}, err
	}
	g := d.gate.Evaluate(ctx, c, links, open[c.ID], action, target, d.gate.Reviewer(ch.Reviewer), ch.AllowLocalPolicy)
	if !g.Allow {
		verb := map[string]string{string(domain.ActionPromote): "promoting", string(domain.ActionPublish): "publishing", string(domain.ActionResolve): "resolving"}[action]
		to := " to " + target
		if action == string(domain.ActionResolve) {
			to = ""
		}
		return g, hosterr.Denied(fmt.Sprintf("gate denied %s %s%s", verb, c.ID, to), g.Reasons)
	}
	return g, nil
}

// lower demotes or retires a card (a person's decision), closing its
// contests and contesting its published copies.
func (d *Door) lower(ctx context.Context, tx *store.Tx, c domain.Card, ch Change) (Outcome, error) {
	o := Outcome{Card: c}
	target := domain.StatusRetired
	if ch.Op == OpDemote {
		target = domain.Status(cmp.Or(ch.Target, string(domain.StatusDemoted)))
		if target != domain.StatusDemoted && target != domain.StatusRetired {
			return o, hosterr.Invalid("target", "--target %q is not valid for demote: use demoted or retired", target)
		}
	}
	if c.Status == domain.StatusRetired || c.Status == target {
		return o, hosterr.Invalid("id", "card %s is already %s", c.ID, c.Status)
	}
	added, err := d.newLinks(ctx, tx, c.ID, ch.Refs)
	if err != nil {
		return o, err
	}
	if ch.Op == OpDemote && len(added) == 0 && !hasRole(ch.Refs, domain.RoleCounterexample) {
		return o, hosterr.Invalid("counterexample", "at least one --counterexample evidence ref is required: record what contradicts the card first")
	}
	extra := map[string]any{}
	if ch.Op == OpDemote {
		extra["links"] = gatekeep.LinkSummary(added)
	}
	open, err := tx.OpenContests(ctx, []string{c.ID})
	if err != nil {
		return o, err
	}
	if n := len(open[c.ID]); n > 0 {
		extra["contests_closed"] = n
	}
	maps.Copy(extra, ch.Data)
	ev := domain.Event{Type: domain.EventType(target), FromStatus: c.Status, ToStatus: target, Reason: ch.Reason}
	if len(extra) > 0 {
		ev.Data = gatekeep.EventData(extra)
	}
	ws := []store.CardWrite{{Move: &store.StatusMove{From: c.Status, To: target}, Links: added, Close: string(target),
		Event: d.event(c.ID, domain.DecidedByHuman, ev)}}
	copies, err := d.supersede(ctx, tx, c, target, ch.Reason)
	if err != nil {
		return o, err
	}
	o.Added = added
	return o, write(ctx, tx, &o, 0, append(ws, copies...))
}

func hasRole(refs []Refs, r domain.Role) bool {
	return slices.ContainsFunc(refs, func(x Refs) bool { return x.Role == r && len(x.IDs) > 0 })
}

// supersede contests the published copies of c, which stopped holding.
func (d *Door) supersede(ctx context.Context, tx *store.Tx, c domain.Card, to domain.Status, reason string) ([]store.CardWrite, error) {
	copies, err := tx.CopiesOf(ctx, c.ID)
	if err != nil {
		return nil, err
	}
	var ws []store.CardWrite
	for _, id := range copies {
		cp, err := tx.Card(ctx, id)
		if err != nil {
			return nil, err
		}
		w, ok, err := d.openContest(ctx, tx, cp, Contest{Kind: ContestWitnessSuperseded,
			Reason: fmt.Sprintf("its original %s was %s: %s", c.ID, to, reason), Source: c.ID})
		if err != nil {
			return nil, err
		}
		if ok {
			ws = append(ws, w)
		}
	}
	return ws, nil
}

// expire retires a candidate past its age or expiry (a rule: a candidate
// holds no authority).
func (d *Door) expire(ctx context.Context, tx *store.Tx, c domain.Card, ch Change) (Outcome, error) {
	o := Outcome{Card: c}
	if c.Status != domain.StatusCandidate {
		return o, hosterr.Invalid("id", "card %s is %s: only a candidate expires", c.ID, c.Status)
	}
	ev := domain.Event{Type: domain.EventRetired, FromStatus: c.Status, ToStatus: domain.StatusRetired, Reason: ch.Reason, Data: data(ch.Data)}
	return o, write(ctx, tx, &o, -1, []store.CardWrite{{Move: &store.StatusMove{From: c.Status, To: domain.StatusRetired},
		Event: d.event(c.ID, domain.DecidedByRule, ev)}})
}

// link adds one evidence link; a counterexample against an authoritative
// card contests it. A link the card has already adds nothing.
func (d *Door) link(ctx context.Context, tx *store.Tx, c domain.Card, ch Change) (Outcome, error) {
	o := Outcome{Card: c}
	links, err := d.checkRefs(ctx, tx, c.ID, ch.Refs)
	if err != nil {
		return o, err
	}
	if err := d.checkOneRole(ctx, tx, c.ID, links); err != nil {
		return o, err
	}
	fresh, err := d.unlinked(ctx, tx, c.ID, links)
	if err != nil || len(fresh) == 0 {
		return o, err
	}
	for i := range fresh {
		fresh[i].Note = ch.Note
	}
	ws := []store.CardWrite{{Links: fresh, Event: d.event(c.ID, domain.DecidedByRule, domain.Event{Type: domain.EventLinked,
		Reason: cmp.Or(ch.Reason, ch.Note), Data: data(ch.Data, "links", gatekeep.LinkSummary(fresh))})}}
	for _, l := range fresh {
		if l.Role != domain.RoleCounterexample {
			continue
		}
		w, ok, err := d.openContest(ctx, tx, c, Contest{Kind: ContestCounterexample,
			Reason: cmp.Or(ch.Note, "counterexample "+l.EvidenceID+" linked"), EvidenceID: l.EvidenceID})
		if err != nil {
			return o, err
		}
		if ok {
			ws = append(ws, w)
		}
	}
	o.Added = fresh
	if err := write(ctx, tx, &o, 0, ws); err != nil {
		return o, err
	}
	if len(o.Events) > 1 {
		o.Contest = &o.Events[1]
	}
	return o, nil
}

// contestOp contests an authoritative card on evidence (witness_superseded:
// on its original); otherwise, or if the same contest is open, no-op.
func (d *Door) contestOp(ctx context.Context, tx *store.Tx, c domain.Card, ch Change) (Outcome, error) {
	o := Outcome{Card: c}
	ct := ch.Contest
	switch {
	case strings.TrimSpace(ct.Kind) == "" || len(ct.Kind) > 64:
		return o, hosterr.Invalid("kind", "a contest needs a short kind: counterexample, contradiction or witness_superseded")
	case strings.TrimSpace(ct.Reason) == "":
		return o, hosterr.Invalid("reason", "a contest needs a reason: say what contradicts the card")
	case ct.EvidenceID == "" && !(ct.Kind == ContestWitnessSuperseded && ct.Source != ""):
		return o, hosterr.Invalid("evidence", "a contest needs evidence: record what contradicts card %s (palace record) and name it", c.ID)
	}
	if ct.EvidenceID != "" {
		if _, err := d.checkRefs(ctx, tx, c.ID, []Refs{{Role: "evidence", IDs: []string{ct.EvidenceID}}}); err != nil {
			return o, err
		}
	}
	w, ok, err := d.openContest(ctx, tx, c, ct)
	if err != nil || !ok {
		return o, err
	}
	if err := write(ctx, tx, &o, -1, []store.CardWrite{w}); err != nil {
		return o, err
	}
	o.Contest = &o.Event
	return o, nil
}

// openContest is the write opening contest ct on c, when c is
// authoritative and the same contest (kind, evidence, source) is not open.
func (d *Door) openContest(ctx context.Context, tx *store.Tx, c domain.Card, ct Contest) (store.CardWrite, bool, error) {
	if !c.Status.Authoritative() {
		return store.CardWrite{}, false, nil
	}
	open, err := tx.OpenContests(ctx, []string{c.ID})
	if err != nil {
		return store.CardWrite{}, false, err
	}
	for _, o := range open[c.ID] {
		if o.Kind == ct.Kind && o.EvidenceID == ct.EvidenceID && o.Source == ct.Source {
			return store.CardWrite{}, false, nil
		}
	}
	return d.contestWrite(c, ct), true, nil
}

func (d *Door) contestWrite(c domain.Card, ct Contest) store.CardWrite {
	ev := d.event(c.ID, domain.DecidedByRule, domain.Event{Type: domain.EventUpdated, FromStatus: c.Status, ToStatus: c.Status, Reason: ct.Reason})
	m := map[string]any{"change": "contested", "kind": ct.Kind}
	if ct.EvidenceID != "" {
		m["evidence_id"] = ct.EvidenceID
	}
	if ct.Source != "" {
		m["source"] = ct.Source
	}
	ev.Data = gatekeep.EventData(m)
	return store.CardWrite{Event: ev, Contests: []store.Contest{{CardID: c.ID, Kind: ct.Kind, Reason: ct.Reason,
		EvidenceID: ct.EvidenceID, Source: ct.Source, Actor: d.gate.Actor, ActorType: d.gate.ActorType(), CreatedAt: ev.CreatedAt}}}
}

// resolve links newer verification and, when the gate allows, closes the
// card's contests (a demoted card's: its counterexamples).
func (d *Door) resolve(ctx context.Context, tx *store.Tx, c domain.Card, ch Change) (Outcome, error) {
	o := Outcome{Card: c}
	open, err := tx.OpenContests(ctx, []string{c.ID})
	if err != nil {
		return o, err
	}
	contests := open[c.ID]
	if len(contests) == 0 && c.Status != domain.StatusDemoted {
		return o, hosterr.Invalid("id", "card %s is %s and not contested: there is nothing to resolve", c.ID, c.Status)
	}
	links, err := tx.Links(ctx, c.ID)
	if err != nil {
		return o, err
	}
	if len(contests) == 0 {
		for _, l := range domain.DistinctLinks(links) {
			if l.Role == domain.RoleCounterexample {
				contests = append(contests, store.Contest{CardID: c.ID, Kind: ContestCounterexample, EvidenceID: l.EvidenceID, EvidenceAt: l.EvidenceAt, CreatedAt: l.CreatedAt})
			}
		}
	}
	if err := d.linkFirst(ctx, tx, &o, c.ID, ch); err != nil {
		return o, err
	}
	if links, err = tx.Links(ctx, c.ID); err != nil {
		return o, err
	}
	g := d.gate.Evaluate(ctx, c, links, contests, string(domain.ActionResolve), string(c.Status), d.gate.Reviewer(ch.Reviewer), ch.AllowLocalPolicy)
	o.Gate = &g
	if !g.Allow {
		return o, hosterr.Denied(fmt.Sprintf("gate denied resolving %s", c.ID), g.Reasons)
	}
	return o, write(ctx, tx, &o, -1, []store.CardWrite{{Close: "resolved", Event: gateEvent(d.event(c.ID, domain.DecidedByGate, domain.Event{
		Type: domain.EventUpdated, FromStatus: c.Status, ToStatus: c.Status, Reason: ch.Reason,
		Data: data(ch.Data, "change", "resolved", "contests_closed", len(open[c.ID]), "allow_local_policy", ch.AllowLocalPolicy)}), g)}})
}

// publish copies an authoritative card one step outward with its links;
// the original is stamped published_to. The gate's publish action decides.
func (d *Door) publish(ctx context.Context, tx *store.Tx, c domain.Card, ch Change) (Outcome, error) {
	o := Outcome{Card: c}
	to := domain.AnchorKind(ch.Target)
	if to != domain.AnchorRepo && to != domain.AnchorGlobal {
		return o, hosterr.Invalid("to", "--to %q is not valid: use repo or global", ch.Target)
	}
	from := d.loc.KindOf(c.AnchorID)
	if want := Outward(from); want != to {
		if want == "" {
			return o, hosterr.Invalid("to", "card %s is global already: there is nothing outward of global", c.ID)
		}
		return o, hosterr.Invalid("to", "publish moves one step at a time: card %s is at the %s anchor, so the next step is --to %s", c.ID, from, want)
	}
	if !c.Status.Authoritative() {
		return o, hosterr.Invalid("id", "card %s is %s: only authoritative cards (%s) are published; promote it first", c.ID, c.Status, strings.Join(domain.Strings(domain.AuthoritativeStatuses()), ", "))
	}
	if c.PublishedTo != "" {
		return o, hosterr.Invalid("id", "card %s was published already, as %s", c.ID, c.PublishedTo)
	}
	g, err := d.ask(ctx, tx, c, string(domain.ActionPublish), string(to), ch)
	o.Gate = &g
	if err != nil {
		return o, err
	}
	links, err := tx.Links(ctx, c.ID)
	if err != nil {
		return o, err
	}
	target, err := d.ensureAnchor(ctx, tx, to)
	if err != nil {
		return o, err
	}
	if first, dup, err := tx.CardByStatement(ctx, target.ID, c.StatementNorm, domain.LiveStatuses()); err != nil {
		return o, err
	} else if dup {
		return o, hosterr.Invalid("id", "the %s anchor already holds a %s card with this statement: %s", to, first.Status, first.ID)
	}
	now := d.gate.Now()
	cp := c
	cp.ID = store.NewID(store.CardPrefix, now)
	cp.AnchorID, cp.OriginCard, cp.PublishedTo = target.ID, c.ID, ""
	if to == domain.AnchorGlobal {
		// The global anchor holds domain global only.
		cp.Domain = domain.DomainGlobal
	}
	cp.CreatedBy = d.gate.Actor
	cp.CreatedAt, cp.UpdatedAt = store.FormatTime(now), store.FormatTime(now)
	copied := make([]domain.Link, len(links))
	for i, l := range links {
		copied[i] = domain.Link{CardID: cp.ID, EvidenceID: l.EvidenceID, Role: l.Role, Note: l.Note, CreatedAt: cp.CreatedAt, SourceRef: l.SourceRef}
	}
	ws := []store.CardWrite{
		{Insert: &cp, Links: copied, Event: gateEvent(d.event(cp.ID, domain.DecidedByGate, domain.Event{Type: domain.EventCreated,
			ToStatus: cp.Status, Reason: ch.Reason, Data: data(nil, "origin_card", c.ID, "links", gatekeep.LinkSummary(copied))}), g)},
		{PublishedTo: cp.ID, Event: gateEvent(d.event(c.ID, domain.DecidedByGate, domain.Event{Type: domain.EventPublished,
			FromStatus: c.Status, ToStatus: c.Status, Reason: ch.Reason, Data: data(nil, "copy", cp.ID, "to", string(to))}), g)},
	}
	o.CopyID = cp.ID
	return o, write(ctx, tx, &o, 1, ws)
}

// Outward is the next anchor kind out from k (a publication's target),
// "" for global.
func Outward(k domain.AnchorKind) domain.AnchorKind {
	switch k {
	case domain.AnchorWorktree:
		return domain.AnchorRepo
	case domain.AnchorRepo:
		return domain.AnchorGlobal
	}
	return ""
}

// govern changes a card's governed attributes (a person's decision).
func (d *Door) govern(ctx context.Context, tx *store.Tx, c domain.Card, ch Change) (Outcome, error) {
	o := Outcome{Card: c}
	if c.Status == domain.StatusRetired {
		return o, hosterr.Invalid("id", "card %s is retired: there is nothing left to govern", c.ID)
	}
	if ch.Attrs == nil || ch.From == ch.To {
		return o, hosterr.Invalid("value", "card %s already has %s: nothing to change", c.ID, ch.To)
	}
	ev := domain.Event{Type: domain.EventUpdated, FromStatus: c.Status, ToStatus: c.Status, Reason: ch.Reason,
		Data: data(ch.Data, "from", ch.From, "to", ch.To)}
	return o, write(ctx, tx, &o, -1, []store.CardWrite{{Attrs: ch.Attrs, Event: d.event(c.ID, domain.DecidedByHuman, ev)}})
}
