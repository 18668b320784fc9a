package palace.lanes_test

import rego.v1

import data.palace.lanes

item(id, persistence, pref, fit, counts, age) := rel_item(id, persistence, pref, fit, 0, counts, age)

rel_item(id, persistence, pref, fit, relevance, counts, age) := {
	"card": {"id": id, "persistence": persistence, "render_pref": pref},
	"scope_fit": fit[0], "operation_fit": fit[1], "relevance": relevance,
	"counts30d": counts, "age_days": age,
}

none := {"applied": 0, "skipped": 0, "trimmed": 0, "viewed": 0}

one(c) := r if {
	d := lanes.decision with input as {"cards": [c], "config": {}}
	r := d[c.card.id]
}

test_breakdown_of_every_term if {
	r := one(rel_item("a", "protected", "auto", [20, 10], 0.4, {"applied": 2, "viewed": 3, "skipped": 9, "trimmed": 7}, 44))
	r.breakdown == {
		"scope_fit": 20, "operation_fit": 10, "relevance": 24, "persistence": 10,
		"viewed": 3, "skipped": -4, "trimmed": -4, "inactivity": -2,
	}
	r.salience == 57
	r.lane == "scoped"
	r.render_form == "inline_compact"
}

test_relevance_points_round_half_up_on_thousandths if {
	one(rel_item("a", "standard", "auto", [0, 0], 0.525, none, 0)).breakdown.relevance == 32
	one(rel_item("a", "standard", "auto", [0, 0], 0.35, none, 0)).breakdown.relevance == 21
	one(rel_item("a", "standard", "auto", [0, 0], 1, none, 0)).breakdown.relevance == 60
}

test_counts_are_capped if {
	r := one(rel_item("a", "standard", "auto", [30, 20], 0.3, {"applied": 9, "viewed": 9, "skipped": 0, "trimmed": 0}, 0))
	r.breakdown.viewed == 5
	p := one(item("a", "standard", "auto", [30, 20], {"applied": 0, "viewed": 0, "skipped": 40, "trimmed": 40}, 0))
	p.breakdown.skipped == -15
	p.breakdown.trimmed == -10
}

test_cooling_starts_at_its_threshold_and_recovers_with_use if {
	one(item("a", "standard", "auto", [30, 0], {"applied": 0, "viewed": 0, "skipped": 5, "trimmed": 3}, 0)).salience == 30
	one(item("a", "standard", "auto", [30, 0], {"applied": 0, "viewed": 0, "skipped": 6, "trimmed": 4}, 0)).salience == 26

	# each application offsets one skip or trim
	one(item("a", "standard", "auto", [30, 0], {"applied": 1, "viewed": 0, "skipped": 6, "trimmed": 4}, 0)).salience == 30
}

test_being_rendered_does_not_warm if {
	r := one(rel_item("a", "standard", "auto", [10, 0], 0.5, {"applied": 12, "viewed": 0, "skipped": 0, "trimmed": 0}, 0))
	r.salience == 40
	not "applied" in object.keys(r.breakdown)
}

test_cooling_never_pushes_out_a_card_the_request_is_about if {
	r := one(rel_item("a", "standard", "auto", [10, 6], 0.5, {"applied": 0, "viewed": 0, "skipped": 30, "trimmed": 30}, 0))
	r.breakdown.skipped == 0
	r.breakdown.trimmed == 0
	r.lane == "scoped"
}

test_inactivity_grace_step_and_max if {
	one(item("a", "standard", "auto", [0, 0], none, 30)).breakdown.inactivity == 0
	one(item("a", "standard", "auto", [0, 0], none, 36)).breakdown.inactivity == 0
	one(item("a", "standard", "auto", [0, 0], none, 37)).breakdown.inactivity == -1
	one(item("a", "standard", "auto", [0, 0], none, 1000)).breakdown.inactivity == -10
	one(item("a", "standard", "auto", [0, 0], none, 0)).breakdown.inactivity == 0
}

test_config_overrides_and_zero_means_default if {
	c := item("a", "standard", "auto", [50, 0], {"applied": 0, "viewed": 0, "skipped": 2, "trimmed": 0}, 20)
	r := lanes.decision.a with input as {"cards": [c], "config": {"inactivity_grace_days": 10, "inactivity_step_days": 2, "inactivity_max": 3, "skip_cooling_threshold_30d": 1}}
	r.breakdown.inactivity == -3
	r.breakdown.skipped == -4
	r0 := lanes.decision.a with input as {"cards": [c], "config": {"inactivity_grace_days": 0, "inactivity_step_days": 0, "inactivity_max": 0}}
	r0.breakdown.inactivity == 0
	r0.breakdown.skipped == 0
}

test_salience_is_clamped if {
	one(rel_item("a", "foundational", "auto", [30, 20], 1, none, 0)).salience == 100
	one(item("a", "standard", "auto", [0, 0], {"applied": 0, "viewed": 0, "skipped": 20, "trimmed": 20}, 0)).salience == 0
}

test_lane_thresholds if {
	one(item("a", "standard", "auto", [30, 20], {"applied": 10, "viewed": 10, "skipped": 0, "trimmed": 0}, 0)).salience == 55
	one(item("a", "standard", "auto", [30, 20], none, 0)).lane == "scoped"
	one(rel_item("a", "standard", "auto", [30, 20], 0.334, none, 0)).lane == "core"
	one(item("a", "standard", "auto", [25, 20], none, 0)).lane == "scoped"
	one(item("a", "standard", "auto", [24, 20], none, 0)).lane == "inspector_only"
	one(rel_item("a", "standard", "auto", [14, 10], 0.2, none, 0)).lane == "ref_only"
	one(rel_item("a", "standard", "auto", [13, 10], 0.2, none, 0)).lane == "inspector_only"
}

test_a_reference_line_needs_relevance if {
	one(rel_item("a", "standard", "auto", [14, 10], 0.199, none, 0)).lane == "inspector_only"
	one(rel_item("a", "standard", "auto", [24, 0], 0.2, none, 0)).lane == "ref_only"
}

test_persistence_is_a_floor_for_relevant_cards_only if {
	# relevant: the bonus counts and foundational reaches core at 40,
	# protected scoped at 40
	one(rel_item("a", "foundational", "auto", [0, 2], 0.3, none, 0)).lane == "core"
	one(rel_item("a", "protected", "auto", [10, 2], 0.3, none, 0)).lane == "scoped"
	one(rel_item("a", "foundational", "auto", [0, 0], 0.3, none, 0)).salience == 38

	# not relevant: no bonus, no inline floor; fitting here as an unscoped
	# card of the repository does, it stays a reference line
	r := one(rel_item("a", "foundational", "auto", [10, 8], 0.29, none, 0))
	r.breakdown.persistence == 0
	r.lane == "ref_only"
	one(rel_item("a", "protected", "auto", [10, 0], 0, none, 0)).lane == "ref_only"

	# a global card, or one that only could apply, does not
	one(rel_item("a", "foundational", "auto", [2, 0], 0, none, 0)).lane == "inspector_only"
	one(rel_item("a", "protected", "auto", [5, 0], 0, none, 0)).lane == "inspector_only"
	one(rel_item("a", "standard", "auto", [30, 0], 0, none, 0)).lane == "inspector_only"
}

wake_item(id, tier, status, persistence, fit, counts, age) := {
	"card": {"id": id, "tier": tier, "status": status, "persistence": persistence, "render_pref": "auto"},
	"scope_fit": fit, "operation_fit": 0, "relevance": 0, "counts30d": counts, "age_days": age,
}

wake_one(c) := r if {
	d := lanes.decision with input as {"cards": [c], "config": {}, "wake": true}
	r := d[c.card.id]
}

test_wake_salience_is_standing if {
	r := wake_one(wake_item("a", "dao_ren", "canonical", "protected", 10, {"applied": 0, "viewed": 2, "skipped": 30, "trimmed": 30, "used": 1}, 44))
	r.breakdown == {"scope_fit": 10, "tier": 20, "status": 10, "persistence": 10, "viewed": 2, "inactivity": -2, "adopted": 12}
	r.salience == 62
	r.lane == "core"
}

test_wake_lanes if {
	# every dao_tian, foundational and protected card wakes in core
	wake_one(wake_item("a", "dao_tian", "canonical", "standard", 2, none, 0)).lane == "core"
	wake_one(wake_item("a", "qi", "promoted", "foundational", 5, none, 0)).lane == "core"
	wake_one(wake_item("a", "qi", "promoted", "protected", 2, none, 0)).lane == "core"

	# then by value, in scoped: a canonical dao_ren card of the repository
	# (40) as a promoted shu card (20); a qi card or a shu card for some
	# paths not at all
	wake_one(wake_item("a", "dao_ren", "canonical", "standard", 10, none, 0)).lane == "scoped"
	wake_one(wake_item("a", "dao_ren", "promoted", "standard", 10, none, 0)).lane == "scoped"
	wake_one(wake_item("a", "shu", "promoted", "standard", 10, none, 0)).lane == "scoped"
	wake_one(wake_item("a", "qi", "promoted", "standard", 10, none, 0)).lane == "inspector_only"
	wake_one(wake_item("a", "shu", "promoted", "standard", 5, none, 0)).lane == "inspector_only"

	# a rejection cools a wake card as it cools any
	wake_one(wake_item("a", "shu", "promoted", "standard", 10, {"applied": 0, "viewed": 0, "skipped": 0, "trimmed": 0, "rejected": 1}, 0)).lane == "inspector_only"
}

test_wake_only_when_asked if {
	c := wake_item("a", "dao_tian", "canonical", "standard", 2, none, 0)
	one(c).lane == "inspector_only"
	r := lanes.decision.a with input as {"cards": [c], "config": {}, "wake": false}
	r.lane == "inspector_only"
}

test_render_forms if {
	counts := {"applied": 5, "viewed": 5, "skipped": 0, "trimmed": 0}
	one(item("a", "standard", "auto", [30, 20], counts, 0)).render_form == "inline_compact"
	one(item("a", "standard", "inline_full", [30, 20], counts, 0)).render_form == "inline_full"
	one(item("a", "standard", "inline_compact", [30, 20], counts, 0)).render_form == "inline_compact"
	one(item("a", "standard", "ref_preferred", [30, 20], counts, 0)).render_form == "ref_only"
	one(item("a", "standard", "auto", [30, 20], none, 0)).render_form == "inline_compact"
	one(item("a", "standard", "inline_full", [30, 20], none, 0)).render_form == "inline_full"
	one(item("a", "standard", "ref_preferred", [30, 20], none, 0)).render_form == "ref_only"
	one(rel_item("a", "standard", "inline_full", [14, 10], 0.2, none, 0)).render_form == "ref_only"
	one(item("a", "standard", "inline_full", [0, 0], none, 0)).render_form == "inspector_only"
}

test_missing_render_pref_and_persistence if {
	r := lanes.decision.a with input as {"cards": [{"card": {"id": "a"}, "scope_fit": 30, "operation_fit": 20}]}
	r.lane == "scoped"
	r.render_form == "inline_compact"
	r.breakdown.persistence == 0
	r.breakdown.relevance == 0
}

test_batch_has_one_result_per_card if {
	d := lanes.decision with input as {"cards": [item("a", "standard", "auto", [0, 0], none, 0), item("b", "standard", "auto", [0, 0], none, 0)]}
	count(d) == 2
}

test_adoption_signals_warm_and_cool if {
	# A used card, off topic and otherwise ref_only, is warmed inline.
	used := one(rel_item("a", "standard", "auto", [20, 0], 0.2, object.union(none, {"used": 1}), 0))
	used.breakdown.adopted == 12
	used.salience == 44
	warmer := one(rel_item("a", "standard", "auto", [20, 0], 0.2, object.union(none, {"used": 2, "miss": 1}), 0))
	warmer.breakdown.adopted == 24
	warmer.lane == "scoped"

	# A rejection cools a card whatever its relevance (the waiver of the
	# rendering counts does not apply) ...
	rejected := one(rel_item("a", "standard", "auto", [20, 10], 0.9, object.union(none, {"rejected": 1}), 0))
	rejected.breakdown.rejected == -30
	rejected.salience == 54

	# ... but a card the request is about stays inline: rejections take it
	# down to the scoped lane at most.
	twice := one(rel_item("a", "standard", "auto", [20, 10], 0.9, object.union(none, {"rejected": 1, "rollback": 2}), 0))
	twice.breakdown.rejected == -39
	twice.salience == 45
	twice.lane == "scoped"

	# An unscoped card exactly about the request, rejected many times.
	about := one(rel_item("a", "standard", "auto", [0, 0], 1, object.union(none, {"rejected": 9}), 0))
	about.breakdown.rejected == -15
	about.lane == "scoped"

	# One already below the floor is not cooled further; one the request
	# is not about loses its inline place.
	low := one(rel_item("a", "protected", "auto", [0, 0], 0.5, object.union(none, {"rejected": 2}), 0))
	not "rejected" in object.keys(low.breakdown)
	low.lane == "scoped"
	off := one(rel_item("a", "standard", "auto", [30, 20], 0.45, object.union(none, {"rejected": 2}), 0))
	off.breakdown.rejected == -60
	off.lane == "inspector_only"
}

test_no_signal_no_term if {
	r := one(rel_item("a", "standard", "auto", [20, 0], 0.2, object.union(none, {"neutral": 3, "contradiction": 2}), 0))
	not "adopted" in object.keys(r.breakdown)
	not "rejected" in object.keys(r.breakdown)
}
