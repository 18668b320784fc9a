package domain

import (
	"fmt"
	"slices"
	"strings"
)

// Tier is how fundamental a card is: dao_tian (universal law) down to qi
// (a tool-level detail). Tiers lists them in rank order.
type Tier string

const (
	TierDaoTian Tier = "dao_tian"
	TierDaoRen  Tier = "dao_ren"
	TierShu     Tier = "shu"
	TierQi      Tier = "qi"
)

// Status is where a card stands in its lifecycle.
type Status string

const (
	StatusCandidate Status = "candidate"
	StatusPromoted  Status = "promoted"
	StatusCanonical Status = "canonical"
	StatusDemoted   Status = "demoted"
	StatusRetired   Status = "retired"
)

// Domain is what a card or piece of evidence is about: the project, the
// agent's own conduct, a skill, or everything.
type Domain string

const (
	DomainProject Domain = "project"
	DomainAgent   Domain = "agent"
	DomainSkill   Domain = "skill"
	DomainGlobal  Domain = "global"
)

// Provenance is where a piece of evidence came from.
type Provenance string

const (
	ProvenanceRuntime  Provenance = "runtime"
	ProvenanceResearch Provenance = "research"
	ProvenanceHuman    Provenance = "human"
)

// Role is what a piece of evidence does for the card it is linked to.
type Role string

const (
	RoleSupporting     Role = "supporting"
	RoleVerification   Role = "verification"
	RoleTeaching       Role = "teaching"
	RoleCounterexample Role = "counterexample"
)

// Persistence is how hard a card is to let go of: foundational cards are
// never cooled out of a context pack.
type Persistence string

const (
	PersistenceStandard     Persistence = "standard"
	PersistenceProtected    Persistence = "protected"
	PersistenceFoundational Persistence = "foundational"
)

// RenderPref is how a card asks to be shown in a context pack.
type RenderPref string

const (
	RenderAuto          RenderPref = "auto"
	RenderInlineFull    RenderPref = "inline_full"
	RenderInlineCompact RenderPref = "inline_compact"
	RenderRefPreferred  RenderPref = "ref_preferred"
)

// AnchorKind is the level a card or piece of evidence is anchored at.
type AnchorKind string

const (
	AnchorWorktree AnchorKind = "worktree"
	AnchorRepo     AnchorKind = "repo"
	AnchorGlobal   AnchorKind = "global"
)

// ActorType says whether a person or an agent did something.
type ActorType string

const (
	ActorHuman ActorType = "human"
	ActorAgent ActorType = "agent"
)

// Lane is the visibility the lanes decision gives a card in a context pack.
type Lane string

const (
	LaneCore          Lane = "core"
	LaneScoped        Lane = "scoped"
	LaneRefOnly       Lane = "ref_only"
	LaneInspectorOnly Lane = "inspector_only"
)

// RenderForm is how a card is actually rendered in a pack.
type RenderForm string

const (
	FormInlineFull    RenderForm = "inline_full"
	FormInlineCompact RenderForm = "inline_compact"
	FormRefOnly       RenderForm = "ref_only"
	FormInspectorOnly RenderForm = "inspector_only"
)

// Action is a lifecycle action the gate decides on; the value is the
// gate input's action, which policies match on.
type Action string

const (
	ActionPromote Action = "promote"
	ActionPublish Action = "publish"
	ActionDemote  Action = "demote"
	ActionRetire  Action = "retire"
	ActionResolve Action = "resolve"
)

// The governed actions of `palace audit action`, as plain strings.
const (
	AuditRescope          = "rescope"
	AuditRetrigger        = "retrigger"
	AuditRevoke           = "revoke"
	AuditSetExpiry        = "set_expiry"
	AuditSetReviewAfter   = "set_review_after"
	AuditMarkFoundational = "mark_foundational"
	AuditPreferCompact    = "prefer_compact"
	AuditSetPersistence   = "set_persistence"
	AuditSetRenderPref    = "set_render_pref"
)

// AuditActions are the audit actions in their canonical order.
var AuditActions = []string{AuditRescope, AuditRetrigger, AuditRevoke, AuditSetExpiry, AuditSetReviewAfter,
	AuditMarkFoundational, AuditPreferCompact, AuditSetPersistence, AuditSetRenderPref}

// EventType is the kind of an append-only card event.
type EventType string

const (
	EventCreated     EventType = "created"
	EventLinked      EventType = "linked"
	EventPromoted    EventType = "promoted"
	EventDemoted     EventType = "demoted"
	EventRetired     EventType = "retired"
	EventPublished   EventType = "published"
	EventDirectWrite EventType = "direct_write"
	EventUpdated     EventType = "updated"
	EventImported    EventType = "imported"
)

// DecidedBy says who allowed a change to a card: changes to authority need
// the gate or a person, a rule decides the rest.
type DecidedBy string

const (
	DecidedByGate  DecidedBy = "gate"
	DecidedByHuman DecidedBy = "human"
	DecidedByRule  DecidedBy = "rule"
)

// Signal is an adoption signal: what an agent or person reports about a
// card it was shown.
type Signal string

const (
	SignalUsed          Signal = "used"
	SignalAccepted      Signal = "accepted"
	SignalRejected      Signal = "rejected"
	SignalMiss          Signal = "miss"
	SignalRollback      Signal = "rollback"
	SignalContradiction Signal = "contradiction"
	SignalNeutral       Signal = "neutral"
)

// Outcome is what happened to a card in one context request, as injection
// telemetry records it.
type Outcome string

const (
	OutcomeInlineFull    Outcome = "inline_full"
	OutcomeInlineCompact Outcome = "inline_compact"
	OutcomeRefOnly       Outcome = "ref_only"
	OutcomeTrimmed       Outcome = "trimmed"
	OutcomeSkippedCooled Outcome = "skipped_cooled"
	OutcomeSkippedScope  Outcome = "skipped_scope"
	OutcomeViewed        Outcome = "viewed"
)

// The valid values of each enumeration in canonical order (Tiers by rank),
// kept in step with the store's CHECK constraints by a test.
var (
	Tiers        = []Tier{TierDaoTian, TierDaoRen, TierShu, TierQi}
	Statuses     = []Status{StatusCandidate, StatusPromoted, StatusCanonical, StatusDemoted, StatusRetired}
	Domains      = []Domain{DomainProject, DomainAgent, DomainSkill, DomainGlobal}
	Provenances  = []Provenance{ProvenanceRuntime, ProvenanceResearch, ProvenanceHuman}
	Roles        = []Role{RoleSupporting, RoleVerification, RoleTeaching, RoleCounterexample}
	Persistences = []Persistence{PersistenceStandard, PersistenceProtected, PersistenceFoundational}
	RenderPrefs  = []RenderPref{RenderAuto, RenderInlineFull, RenderInlineCompact, RenderRefPreferred}
	AnchorKinds  = []AnchorKind{AnchorWorktree, AnchorRepo, AnchorGlobal}
	ActorTypes   = []ActorType{ActorHuman, ActorAgent}
	Lanes        = []Lane{LaneCore, LaneScoped, LaneRefOnly, LaneInspectorOnly}
	RenderForms  = []RenderForm{FormInlineFull, FormInlineCompact, FormRefOnly, FormInspectorOnly}
	Actions      = []Action{ActionPromote, ActionPublish, ActionDemote, ActionRetire, ActionResolve}
	Deciders     = []DecidedBy{DecidedByGate, DecidedByHuman, DecidedByRule}
	EventTypes   = []EventType{EventCreated, EventLinked, EventPromoted, EventDemoted, EventRetired, EventPublished, EventDirectWrite, EventUpdated, EventImported}
	Signals      = []Signal{SignalUsed, SignalAccepted, SignalRejected, SignalMiss, SignalRollback, SignalContradiction, SignalNeutral}
	Outcomes     = []Outcome{OutcomeInlineFull, OutcomeInlineCompact, OutcomeRefOnly, OutcomeTrimmed, OutcomeSkippedCooled, OutcomeViewed, OutcomeSkippedScope}
)

// InvalidError says a value is not one of its enumeration's.
type InvalidError struct {
	Field string
	Value string
	Valid []string
}

func (e *InvalidError) Error() string {
	return fmt.Sprintf("%s %q is not valid: use one of %s", e.Field, e.Value, strings.Join(e.Valid, ", "))
}

// Parse returns s as a value of valid, or an *InvalidError.
func Parse[T ~string](field, s string, valid []T) (T, error) {
	if v := T(s); slices.Contains(valid, v) {
		return v, nil
	}
	return "", &InvalidError{Field: field, Value: s, Valid: Strings(valid)}
}

// Strings returns vs as plain strings (for flags, messages and queries).
func Strings[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// ParseTier parses a tier.
func ParseTier(s string) (Tier, error) { return Parse("tier", s, Tiers) }

// ParseStatus parses a status.
func ParseStatus(s string) (Status, error) { return Parse("status", s, Statuses) }

// ParseRole parses an evidence role.
func ParseRole(s string) (Role, error) { return Parse("role", s, Roles) }

// Valid reports whether t is a known tier.
func (t Tier) Valid() bool { return slices.Contains(Tiers, t) }

// Rank orders tiers dao_tian (0) → qi (3); unknown tiers sort last.
func (t Tier) Rank() int {
	if i := slices.Index(Tiers, t); i >= 0 {
		return i
	}
	return len(Tiers)
}

// Valid reports whether s is a known status.
func (s Status) Valid() bool { return slices.Contains(Statuses, s) }

// Authoritative is the one place deciding whether a status makes a card
// authoritative (runtime-eligible): no query hard-codes the list.
func (s Status) Authoritative() bool { return s == StatusPromoted || s == StatusCanonical }

// Live reports whether a card in status s counts for the duplicate rule.
func (s Status) Live() bool { return s != StatusDemoted && s != StatusRetired }

// AuthoritativeStatuses lists the statuses Authoritative accepts.
func AuthoritativeStatuses() []Status {
	return slices.DeleteFunc(slices.Clone(Statuses), func(s Status) bool { return !s.Authoritative() })
}

// LiveStatuses lists the statuses Live accepts.
func LiveStatuses() []Status {
	return slices.DeleteFunc(slices.Clone(Statuses), func(s Status) bool { return !s.Live() })
}

// Valid reports whether r is a known role.
func (r Role) Valid() bool { return slices.Contains(Roles, r) }

// Valid reports whether p is a known provenance.
func (p Provenance) Valid() bool { return slices.Contains(Provenances, p) }

// Valid reports whether p is a known persistence.
func (p Persistence) Valid() bool { return slices.Contains(Persistences, p) }

// Valid reports whether p is a known rendering preference.
func (p RenderPref) Valid() bool { return slices.Contains(RenderPrefs, p) }

// Valid reports whether k is a known anchor kind.
func (k AnchorKind) Valid() bool { return slices.Contains(AnchorKinds, k) }

// Valid reports whether l is a known lane.
func (l Lane) Valid() bool { return slices.Contains(Lanes, l) }

// Valid reports whether f is a known render form.
func (f RenderForm) Valid() bool { return slices.Contains(RenderForms, f) }
