# palace.lanes computes, for a batch of cards that apply, their salience
# (0..100), its breakdown, the injection lane and the render form.
#
# Input and output are documented in policies/README.md. One evaluation
# covers the whole batch. This is the seed arithmetic, which the example
# plugin examples/plugins/lanes-go computes and TestLanesGoMatchesRego
# holds it to; the embedded default weighs relevance instead:
#
#   salience = scope_fit + operation_fit + persistence bonus (foundational 20,
#   protected 10) + min(applied*2, 10) + min(viewed, 5) − min(skipped*2, 15)
#   − min(trimmed*2, 10) − inactivity, clamped to 0..100, where
#   inactivity = min(max, max(0, floor((age_days − grace) / step))).
#
# Lanes: (foundational and ≥ 40) or ≥ 70 core, ≥ 45 scoped, ≥ 20 ref_only,
# else inspector_only. The example plugin examples/plugins/lanes-go computes
# the same; keep them in step.
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

persistence_bonus := {"foundational": 20, "protected": 10}

decision := {c.card.id: result(c) | some c in input.cards}

result(c) := {"salience": salience, "breakdown": breakdown, "lane": lane, "render_form": render_form(lane, object.get(c.card, "render_pref", "auto"))} if {
	counts := object.get(c, "counts30d", {})
	persistence := object.get(c.card, "persistence", "standard")
	breakdown := {
		"scope_fit": object.get(c, "scope_fit", 0),
		"operation_fit": object.get(c, "operation_fit", 0),
		"persistence": object.get(persistence_bonus, persistence, 0),
		"applied": min([object.get(counts, "applied", 0) * 2, 10]),
		"viewed": min([object.get(counts, "viewed", 0), 5]),
		"skipped": 0 - min([object.get(counts, "skipped", 0) * 2, 15]),
		"trimmed": 0 - min([object.get(counts, "trimmed", 0) * 2, 10]),
		"inactivity": 0 - min([inactivity_max, max([0, floor((object.get(c, "age_days", 0) - grace) / step)])]),
	}
	salience := min([100, max([0, sum([v | some v in breakdown])])])
	lane := lane_of(salience, persistence)
}

lane_of(s, persistence) := "core" if {
	persistence == "foundational"
	s >= 40
} else := "core" if {
	s >= 70
} else := "scoped" if {
	s >= 45
} else := "ref_only" if {
	s >= 20
} else := "inspector_only"

# A card's render_pref can soften or sharpen the lane's default form; the
# lane itself never changes.
preferred := {
	"core": {"inline_compact": "inline_compact", "ref_preferred": "ref_only"},
	"scoped": {"inline_full": "inline_full", "ref_preferred": "ref_only"},
}

lane_form := {"core": "inline_full", "scoped": "inline_compact", "ref_only": "ref_only", "inspector_only": "inspector_only"}

render_form(lane, pref) := object.get(object.get(preferred, lane, {}), pref, lane_form[lane])
