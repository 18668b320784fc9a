package policies

import (
	"math"

	"github.com/palacehq/palace/domain"
)

// defaultLanes is default/lanes.rego in Go, also the fallback when a team's
// lanes policy fails. TestNativeMatchesRego holds the two identical.
func defaultLanes(in LanesInput) LanesOutput {
	cfg := in.Config.withDefaults()
	out := make(LanesOutput, len(in.Cards))
	if in.Wake {
		for _, c := range in.Cards {
			out[c.Card.ID] = wakeLanes(c, cfg)
		}
		return out
	}
	for _, c := range in.Cards {
		rel := c.Relevance
		applied := c.Counts30d.Applied
		persistence := 0
		if rel >= relevantCard {
			persistence = persistenceBonus(c.Card.Persistence)
		}
		b := map[string]int{
			"scope_fit":     c.ScopeFit,
			"operation_fit": c.OperationFit,
			"relevance":     relPoints(rel, relevancePoints),
			"persistence":   persistence,
			"viewed":        min(c.Counts30d.Viewed, 5),
			"skipped":       -cooling(c.Counts30d.Skipped-applied, cfg.SkipCoolingThreshold30d, 15, rel),
			"trimmed":       -cooling(c.Counts30d.Trimmed-applied, cfg.TrimCoolingThreshold30d, 10, rel),
			"inactivity":    -inactivity(c.AgeDays, cfg),
		}
		salience := total(b, c.Counts30d, rel)
		lane := laneOf(salience, c.Card.Persistence, rel, c.ScopeFit)
		out[c.Card.ID] = LaneResult{Salience: salience, Breakdown: b, Lane: lane, RenderForm: renderForm(lane, c.Card.RenderPref)}
	}
	return out
}

// wakeLanes is one card's result in a wake-up pack: its standing, not its
// relevance (default/lanes.rego's wake_result).
func wakeLanes(c LanesCard, cfg LanesConfig) LaneResult {
	b := map[string]int{
		"scope_fit":   c.ScopeFit,
		"tier":        wakeTier[c.Card.Tier],
		"status":      wakeStatus[c.Card.Status],
		"persistence": persistenceBonus(c.Card.Persistence),
		"viewed":      min(c.Counts30d.Viewed, 5),
		"inactivity":  -inactivity(c.AgeDays, cfg),
	}
	salience := total(b, c.Counts30d, 0)
	var lane domain.Lane
	switch {
	case c.Card.Tier == string(domain.TierDaoTian), standingCard(c.Card.Persistence):
		lane = domain.LaneCore
	case salience >= wakeScoped:
		lane = domain.LaneScoped
	default:
		lane = domain.LaneInspectorOnly
	}
	return LaneResult{Salience: salience, Breakdown: b, Lane: lane, RenderForm: renderForm(lane, c.Card.RenderPref)}
}

// total adds the adoption signals' terms to the breakdown b and returns the
// salience: the sum of b, clamped to 0..100.
func total(b map[string]int, c Counts30d, relevance float64) int {
	if n := adoptedPoints(c); n != 0 {
		b["adopted"] = n
	}
	sum := 0
	for _, v := range b {
		sum += v
	}
	if n := rejectedPoints(c, sum, relevance); n != 0 {
		b["rejected"] = n
		sum += n
	}
	return min(100, max(0, sum))
}

func inactivity(ageDays int, cfg LanesConfig) int {
	return min(cfg.InactivityMax, max(0, floorDiv(ageDays-cfg.InactivityGraceDays, cfg.InactivityStepDays)))
}

// The wake-up terms and thresholds of default/lanes.rego.
var (
	wakeTier   = map[string]int{"dao_tian": 40, "dao_ren": 20, "shu": 10, "qi": 5}
	wakeStatus = map[string]int{"canonical": 10}
)

// wakeScoped is the salience from which a card is among the most valued
// of a wake-up pack (a promoted shu card of the repository).
const wakeScoped = 20

// standingCard says whether a card's persistence gives it standing: a
// foundational or protected card.
func standingCard(p string) bool {
	return p == string(domain.PersistenceFoundational) || p == string(domain.PersistenceProtected)
}

// floorDiv is floor(a / b) as Rego's floor of a division gives, also for
// negative operands (Go's / truncates toward zero).
func floorDiv(a, b int) int {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func persistenceBonus(p string) int {
	switch p {
	case "foundational":
		return 20
	case "protected":
		return 10
	}
	return 0
}

// The constants of default/lanes.rego; its header says why they are these.
const (
	relevancePoints = 60
	// relevantCard is the relevance from which persistence counts, onTopic
	// the one from which cooling is waived.
	relevantCard = 0.3
	onTopic      = 0.5
	// worthALine is the relevance a reference line needs.
	worthALine = 0.2
	// signalFloor is the salience of the scoped lane: rejections do not
	// cool a card the request is about below it.
	signalFloor = 45
	// standingFit is the scope fit from which a foundational or protected
	// card keeps a reference line whatever the request is about.
	standingFit = 10
)

// relPoints is relevance × scale rounded half up, on thousandths, as the
// Rego computes it.
func relPoints(relevance float64, scale int) int {
	m := int(math.Round(relevance * 1000))
	return (m*scale + 500) / 1000
}

// cooling is the penalty of n skips or trims (net of applications) against
// threshold, capped; none for a card the request is about.
func cooling(n, threshold, limit int, relevance float64) int {
	if relevance >= onTopic {
		return 0
	}
	return min(limit, 2*max(0, n-threshold+1))
}

func laneOf(salience int, persistence string, relevance float64, scopeFit int) domain.Lane {
	relevant := relevance >= relevantCard
	switch {
	case salience >= 70, persistence == string(domain.PersistenceFoundational) && relevant && salience >= 40:
		return domain.LaneCore
	case salience >= 45, persistence == string(domain.PersistenceProtected) && relevant && salience >= 40:
		return domain.LaneScoped
	case salience >= 36 && relevance >= worthALine, standingCard(persistence) && scopeFit >= standingFit:
		return domain.LaneRefOnly
	}
	return domain.LaneInspectorOnly
}

// renderForm applies a card's render_pref to its lane's default form; the
// lane itself never changes.
func renderForm(lane domain.Lane, pref string) domain.RenderForm {
	switch lane {
	case domain.LaneCore, domain.LaneScoped:
		switch domain.RenderPref(pref) {
		case domain.RenderInlineFull:
			return domain.FormInlineFull
		case domain.RenderRefPreferred:
			return domain.FormRefOnly
		}
		return domain.FormInlineCompact
	}
	// ref_only and inspector_only render as themselves.
	return domain.RenderForm(lane)
}

// adoptedPoints warms a card that requests like this one used, accepted or
// missed. Explicit signals weigh more than rendering counts.
func adoptedPoints(c Counts30d) int { return min(24, 12*(c.Used+c.Accepted+c.Miss)) }

// rejectedPoints cools a card that requests like this one rejected or rolled
// back; a card the request is about (relevance ≥ onTopic) is cooled at most
// down to signalFloor from pre, the salience of every other term.
func rejectedPoints(c Counts30d, pre int, relevance float64) int {
	n := min(60, 30*(c.Rejected+c.Rollback))
	if relevance >= onTopic {
		n = min(n, max(0, pre-signalFloor))
	}
	return -n
}
