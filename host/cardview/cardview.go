// Package cardview owns the card facts several jobs compute and show alike:
// how an anchor is named in output, a card's contest as a pack and the gate
// see it, its cooling window and age, the verdicts of its adoption signals
// and the scope card the policies take. It writes nothing and must not
// import host or any job.
package cardview

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/palacehq/palace/anchor"
	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/policies"
	"github.com/palacehq/palace/store"
)

// StaleDays is how long a card may go without being applied or changed
// before it counts as stale: the audit flags it, a brief says so.
const StaleDays = 180

// ItemContest is the warning a contested card carries where it is shown,
// beside its own statement. It never holds what an agent wrote when raising
// the contest: every later agent would read that in the card's place.
type ItemContest struct {
	Kinds []string `json:"kinds"`
	Since string   `json:"since"`
	// Reasons are the reasons of the contests a person opened (palace's own
	// words for those it opened itself); never an agent's.
	Reasons []string `json:"reasons"`
	// Citations are the contradicting evidence (role counterexample, or the
	// contest's kind).
	Citations []Citation `json:"citations"`
	// Action is what a human does about it.
	Action string `json:"action"`
}

// ContestOf is the warning of a card with these open contests, nil for none.
func ContestOf(contests []store.Contest) *ItemContest {
	if len(contests) == 0 {
		return nil
	}
	gc := GateContest(contests)
	out := &ItemContest{Kinds: gc.Kinds, Since: gc.Since, Reasons: []string{}, Citations: []Citation{},
		Action: "demote it (`palace demote " + contests[0].CardID + " --counterexample EV --reason R`) or resolve it with newer verification (`palace resolve " + contests[0].CardID + " --verification EV --reason R`)"}
	for _, c := range contests {
		if c.ActorType == domain.ActorHuman && c.Reason != "" {
			out.Reasons = append(out.Reasons, c.Reason)
		}
		if c.EvidenceID != "" {
			// The kind names the evidence's role or what contradicted.
			out.Citations = append(out.Citations, Citation{EvidenceID: c.EvidenceID, Role: domain.Role(c.Kind), SourceRef: c.SourceRef})
		}
	}
	return out
}

// GateContest is the contest part of the gate's input: whether a card is
// contested, since when (the newest contradicting evidence, else the
// contest's own time) and by what kinds, sorted.
func GateContest(contests []store.Contest) policies.GateContest {
	gc := policies.GateContest{Kinds: []string{}}
	for _, c := range contests {
		gc.Contested = true
		at := c.CreatedAt
		if c.EvidenceAt != "" {
			at = c.EvidenceAt
		}
		if at > gc.Since {
			gc.Since = at
		}
		if !slices.Contains(gc.Kinds, c.Kind) {
			gc.Kinds = append(gc.Kinds, c.Kind)
		}
	}
	slices.Sort(gc.Kinds)
	return gc
}

// ShellWord quotes s for a shell when it needs it.
func ShellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r == '/' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// CoolingWindow is the window of the injection counts that cool lanes.
const CoolingWindow = 30 * 24 * time.Hour

// ScopeCard is card c as the scope policy reads it, at an anchor of kind
// anchorKind.
func ScopeCard(c domain.Card, anchorKind string) policies.ScopeCard {
	return policies.ScopeCard{
		ID: c.ID, Tier: string(c.Tier), Status: string(c.Status), Domain: string(c.Domain), Field: c.Field, Anchor: anchorKind,
		Persistence: string(c.Persistence), Statement: c.Statement,
		Scope:   policies.CardScope{Paths: c.Scope.Paths, Languages: c.Scope.Languages, Fields: c.Scope.Fields},
		Trigger: policies.CardTrigger{Patterns: c.Trigger.Patterns, Intents: c.Trigger.Intents, ToolNeeds: c.Trigger.ToolNeeds},
	}
}

// LaneOrder ranks lanes for output: core, scoped, reference, inspector
// only, then any other.
func LaneOrder(l domain.Lane) int {
	if r, ok := laneRank[l]; ok {
		return r
	}
	return len(laneRank)
}

// SignalsPerCardDay is how many adoption signals of one actor type count on
// one card per UTC day, so no one moves a card by repeating themselves under
// new names or requests.
const SignalsPerCardDay = 3

// SignalVerdicts says, for each of sigs (oldest first, as store.CardSignals
// reads them), why it does not count, "" when it counts: a signal counts once
// per (actor, card, request id or terms), and the first SignalsPerCardDay
// per card, UTC day and actor type. Neutral signals and those naming no
// card are never refused here (they count nowhere anyway).
func SignalVerdicts(sigs []store.CardSignal) []string {
	out := make([]string, len(sigs))
	seen := map[[3]string]bool{}
	perDay := map[[3]string]int{}
	for i, s := range sigs {
		if s.CardID == "" || s.Signal == "neutral" {
			continue
		}
		req := s.RequestID
		if req == "" && s.RequestTerms != "" {
			req = "terms:" + s.RequestTerms
		}
		key := [3]string{s.Actor, s.CardID, req}
		if seen[key] {
			out[i] = NotCountedRepeat
			continue
		}
		day := [3]string{s.CardID, s.CreatedAt[:min(10, len(s.CreatedAt))], string(s.ActorType)}
		if perDay[day] >= SignalsPerCardDay {
			out[i] = NotCountedDailyLimit
			continue
		}
		seen[key] = true
		perDay[day]++
	}
	return out
}

// NotCountedReason says in a sentence why a signal of actorType on card
// does not count (verdict from SignalVerdicts), "" when it counts.
func NotCountedReason(verdict, card string, actorType domain.ActorType) string {
	switch verdict {
	case NotCountedRepeat:
		return fmt.Sprintf("a repeat: this actor signalled %s for this request already, and a signal counts once per actor, card and request; it is recorded and counts nowhere", card)
	case NotCountedDailyLimit:
		return fmt.Sprintf("over the daily limit: %d %s signals count on %s per day; it is recorded and counts nowhere", SignalsPerCardDay, actorType, card)
	}
	return ""
}

// DaysSince counts whole days from stamp to now, 0 for a bad or future stamp.
func DaysSince(stamp string, now time.Time) int {
	t, err := time.Parse(time.RFC3339Nano, stamp)
	if err != nil || !now.After(t) {
		return 0
	}
	return int(now.Sub(t) / (24 * time.Hour))
}

// AnchorRef names an anchor in output.
type AnchorRef struct {
	Kind     string `json:"kind"`
	ID       string `json:"id"`
	Identity string `json:"identity,omitempty"`
}

// RefOf names anchor id as seen from loc: ids of loc's chain resolve
// without a query; an id the store does not know is of kind "unknown".
func RefOf(ctx context.Context, st *store.Store, loc anchor.Location, id string) AnchorRef {
	if k := loc.KindOf(id); k != "" {
		return AnchorRef{Kind: string(k), ID: id, Identity: loc.Identity(k)}
	}
	a, err := st.AnchorByID(ctx, id)
	if err != nil {
		return AnchorRef{Kind: "unknown", ID: id}
	}
	return AnchorRef{Kind: a.Kind, ID: a.ID, Identity: a.Identity}
}

// DisplayIdentity is an anchor identity without its kind prefix.
func DisplayIdentity(a AnchorRef) string {
	s := a.Identity
	for _, p := range []string{"repo:", "worktree:"} {
		s = strings.TrimPrefix(s, p)
	}
	if s == "" {
		s = a.ID
	}
	return s
}

// Citation is one evidence link of an item.
type Citation struct {
	EvidenceID string      `json:"evidence_id"`
	Role       domain.Role `json:"role"`
	SourceRef  string      `json:"source_ref"`
}

var laneRank = map[domain.Lane]int{domain.LaneCore: 0, domain.LaneScoped: 1, domain.LaneRefOnly: 2, domain.LaneInspectorOnly: 3}

// Why a recorded signal does not count (SignalVerdicts, NotCountedReason).
const (
	NotCountedRepeat     = "repeat"
	NotCountedDailyLimit = "daily_limit"
)

// Detail names what contests the card: its kinds, the contradicting
// evidence with its source, what the people who opened a contest said.
func (c *ItemContest) Detail() string {
	parts := []string{strings.Join(c.Kinds, ", ")}
	for _, cit := range c.Citations {
		s := cit.EvidenceID
		if cit.SourceRef != "" {
			s += " (" + strings.Join(strings.Fields(cit.SourceRef), " ") + ")"
		}
		parts = append(parts, s)
	}
	for _, r := range c.Reasons {
		parts = append(parts, strings.Join(strings.Fields(r), " "))
	}
	return strings.Join(parts, " · ")
}
