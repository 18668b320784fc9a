# palace.lanes computes, for a batch of cards that apply, their salience
# (0..100), its breakdown, the injection lane and the render form.
#
# Input and output are documented in policies/README.md. One evaluation
# covers the whole batch. Relevance (the host's ranking of the card against
# the query and the file under edit, 0..1) is part of salience, so what the
# request is about decides what is inlined:
#
#   salience = scope_fit + operation_fit + relevance points (relevance × 60,
#   rounded) + persistence bonus (foundational 20, protected 10, only for a
#   card relevant to the request: relevance ≥ 0.3) + min(viewed, 5) − skip
#   cooling − trim cooling − inactivity, clamped to 0..100, where
#     skip cooling = min(15, 2 × max(0, skipped − applied − threshold + 1))
#     with threshold skip_cooling_threshold_30d (6), trim cooling the same
#     with trimmed, trim_cooling_threshold_30d (4) and a cap of 10, both 0
#     for a card the request is about (relevance ≥ 0.5): cooling recovers
#     as the card is applied again and never pushes out a card relevant to
#     the current request; and
#     inactivity = min(max, max(0, floor((age_days − grace) / step))).
#
# Being rendered does not warm a card: a card shown for a request is not
# thereby worth showing again (replaying a task set with that warming
# inlined what earlier packs had shown and lost precision and budget
# recall); applications only offset cooling. What an agent says it used
# warms a card. counts30d
# also holds the signals of the last 30 days from requests like this one
# (the host compares the requests' terms): used, accepted and miss (the
# card was needed and not given) warm the card, adopted = min(24, 12 ×
# (used + accepted + miss)); rejected and rollback cool it, rejected =
# −min(60, 30 × (rejected + rollback)), whatever its relevance (a
# lexically tempting card an agent turned down is the case that matters),
# except that a card the request is about (relevance ≥ 0.5) is cooled at
# most down to 45 (the scoped lane) from the sum of its other terms: a
# signal may lower its rank, never push it out of every inline lane. Both
# terms appear in the breakdown only when they are not 0. Signals never
# change a card's status; a contradiction is the audit's business.
#
# Lanes: core ≥ 70, or a relevant foundational card ≥ 40; scoped ≥ 45, or a
# relevant protected card ≥ 40 (foundational and protected cards are a floor
# for relevant cards: they do not fall below an inline form); ref_only ≥ 36 with relevance ≥ 0.2 (a
# reference line needs real relevance), or a foundational or protected card
# that fits where the request is at least as well as an unscoped card of
# this repository (scope_fit ≥ 10: unscoped at the repository or worktree,
# or a scope the request confirms), whatever the request is about: a
# standing card stays a reference; else inspector_only. Core and scoped
# render compact by default (one line each); a card's render_pref can ask
# for the full text. The per-lane count limits are the host's (config
# core_inline_limit, scoped_inline_limit, ref_only_limit).
#
# Wake-up (input.wake): a request that names no task at all — no query,
# file, language, field, intent or tool: a session start, an editor opening
# a repository — is about nothing, so relevance ranks nothing. The pack
# then wakes the foundational layer, and salience is the card's standing:
#
#   salience = scope_fit + tier (dao_tian 40, dao_ren 20, shu 10, qi 5) +
#   status (canonical 10) + persistence (foundational 20, protected 10,
#   whatever the relevance) + min(viewed, 5) + adopted − rejected −
#   inactivity, clamped to 0..100.
#
# Skip and trim cooling do not count (they say how cards fared against
# tasks); signals and inactivity do. Lanes: core — the foundational layer —
# for every dao_tian card (the host keeps at most --dao-tian-limit of them)
# and every foundational or protected card; scoped, the most valued of the
# rest, from 20 (a promoted shu card of this repository); else
# inspector_only: a wake-up pack names no reference lines of its own.
package palace.lanes

import rego.v1

config := object.get(input, "config", {})

# setting(key, def) is config[key], or def when it is absent or 0.
setting(key, def) := v if {
	v := object.get(config, key, 0)
	v != 0
} else := def

grace := setting("inactivity_grace_days", 30)

step := setting("inactivity_step_days", 7)

inactivity_max := setting("inactivity_max", 10)

skip_threshold := setting("skip_cooling_threshold_30d", 6)

trim_threshold := setting("trim_cooling_threshold_30d", 4)

# relevant is the relevance from which persistence counts; on_topic the one
# from which cooling is waived.
relevant := 0.3

on_topic := 0.5

# worth_a_line is the relevance a reference line needs: a scope match alone
# does not earn one.
worth_a_line := 0.2

# signal_floor is the scoped lane's salience: rejections do not cool a card
# the request is about below it.
signal_floor := 45

persistence_bonus := {"foundational": 20, "protected": 10}

# wake is set when the request names no task (see the header).
wake := object.get(input, "wake", false)

# standing_fit is the scope fit from which a foundational or protected
# card keeps a reference line whatever the request is about: an unscoped
# card's at a repository or worktree anchor.
standing_fit := 10

standing := {"foundational", "protected"}

decision := {c.card.id: decide(c) | some c in input.cards}

decide(c) := wake_result(c) if {
	wake
} else := result(c)

result(c) := {"salience": salience, "breakdown": breakdown, "lane": lane, "render_form": render_form(lane, object.get(c.card, "render_pref", "auto"))} if {
	counts := object.get(c, "counts30d", {})
	persistence := object.get(c.card, "persistence", "standard")
	relevance := object.get(c, "relevance", 0)
	applied := object.get(counts, "applied", 0)
	base := {
		"scope_fit": object.get(c, "scope_fit", 0),
		"operation_fit": object.get(c, "operation_fit", 0),
		"relevance": points(relevance, 60),
		"persistence": persistence_points(persistence, relevance),
		"viewed": min([object.get(counts, "viewed", 0), 5]),
		"skipped": 0 - cooling(object.get(counts, "skipped", 0) - applied, skip_threshold, 15, relevance),
		"trimmed": 0 - cooling(object.get(counts, "trimmed", 0) - applied, trim_threshold, 10, relevance),
		"inactivity": 0 - min([inactivity_max, max([0, floor((object.get(c, "age_days", 0) - grace) / step)])]),
	}
	warmed := object.union(base, adopted_term(counts))
	breakdown := object.union(warmed, rejected_term(counts, sum([v | some v in warmed]), relevance))
	salience := min([100, max([0, sum([v | some v in breakdown])])])
	lane := lane_of(salience, persistence, relevance, object.get(c, "scope_fit", 0))
}

# wake_result is a card's standing in a wake-up pack (see the header).
wake_result(c) := {"salience": salience, "breakdown": breakdown, "lane": lane, "render_form": render_form(lane, object.get(c.card, "render_pref", "auto"))} if {
	counts := object.get(c, "counts30d", {})
	persistence := object.get(c.card, "persistence", "standard")
	tier := object.get(c.card, "tier", "")
	base := {
		"scope_fit": object.get(c, "scope_fit", 0),
		"tier": object.get(wake_tier, tier, 0),
		"status": object.get(wake_status, object.get(c.card, "status", ""), 0),
		"persistence": object.get(persistence_bonus, persistence, 0),
		"viewed": min([object.get(counts, "viewed", 0), 5]),
		"inactivity": 0 - min([inactivity_max, max([0, floor((object.get(c, "age_days", 0) - grace) / step)])]),
	}
	warmed := object.union(base, adopted_term(counts))
	breakdown := object.union(warmed, rejected_term(counts, sum([v | some v in warmed]), 0))
	salience := min([100, max([0, sum([v | some v in breakdown])])])
	lane := wake_lane(salience, tier, persistence)
}

wake_tier := {"dao_tian": 40, "dao_ren": 20, "shu": 10, "qi": 5}

wake_status := {"canonical": 10}

wake_lane(s, tier, persistence) := "core" if {
	tier == "dao_tian"
} else := "core" if {
	persistence in standing
} else := "scoped" if {
	s >= 20
} else := "inspector_only"

# adopted_term and rejected_term are the adoption signals' salience terms,
# each only when it is not 0. A card the request is about (relevance ≥
# on_topic) is cooled by rejections at most down to signal_floor from pre,
# the salience of every other term: a signal may lower its rank, never push
# it out of every inline lane.
adopted_term(counts) := {"adopted": n} if {
	n := min([24, 12 * ((object.get(counts, "used", 0) + object.get(counts, "accepted", 0)) + object.get(counts, "miss", 0))])
	n != 0
} else := {}

rejected_term(counts, pre, relevance) := {"rejected": 0 - n} if {
	n := rejected_cooling(min([60, 30 * (object.get(counts, "rejected", 0) + object.get(counts, "rollback", 0))]), pre, relevance)
	n != 0
} else := {}

rejected_cooling(n, pre, relevance) := min([n, max([0, pre - signal_floor])]) if {
	relevance >= on_topic
} else := n

# points(relevance, scale) is relevance × scale rounded half up, computed
# on thousandths (the host sends three decimals) so every engine agrees.
points(relevance, scale) := floor(((round(relevance * 1000) * scale) + 500) / 1000)

persistence_points(p, relevance) := object.get(persistence_bonus, p, 0) if {
	relevance >= relevant
} else := 0

cooling(n, threshold, cap, relevance) := 0 if {
	relevance >= on_topic
} else := min([cap, 2 * max([0, (n - threshold) + 1])])

lane_of(s, persistence, relevance, fit) := "core" if {
	s >= 70
} else := "core" if {
	persistence == "foundational"
	relevance >= relevant
	s >= 40
} else := "scoped" if {
	s >= 45
} else := "scoped" if {
	persistence == "protected"
	relevance >= relevant
	s >= 40
} else := "ref_only" if {
	s >= 36
	relevance >= worth_a_line
} else := "ref_only" if {
	persistence in standing
	fit >= standing_fit
} else := "inspector_only"

# A card's render_pref can soften or sharpen the lane's default form; the
# lane itself never changes.
preferred := {
	"core": {"inline_full": "inline_full", "ref_preferred": "ref_only"},
	"scoped": {"inline_full": "inline_full", "ref_preferred": "ref_only"},
}

lane_form := {"core": "inline_compact", "scoped": "inline_compact", "ref_only": "ref_only", "inspector_only": "inspector_only"}

render_form(lane, pref) := object.get(object.get(preferred, lane, {}), pref, lane_form[lane])
