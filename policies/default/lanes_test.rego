package palace.lanes_test

import rego.v1

import data.palace.lanes

item(id, persistence, pref, fit, counts, age) := {
	"card": {"id": id, "persistence": persistence, "render_pref": pref},
	"scope_fit": fit[0], "operation_fit": fit[1], "relevance": 0,
	"counts30d": counts, "age_days": age,
}

none := {"applied": 0, "skipped": 0, "trimmed": 0, "viewed": 0}

one(c) := r if {
	d := lanes.decision with input as {"cards": [c], "config": {}}
	r := d[c.card.id]
}

test_breakdown_of_every_term if {
	r := one(item("a", "protected", "auto", [20, 10], {"applied": 2, "viewed": 3, "skipped": 1, "trimmed": 1}, 44))
	r.breakdown == {
		"scope_fit": 20, "operation_fit": 10, "persistence": 10, "applied": 4,
		"viewed": 3, "skipped": -2, "trimmed": -2, "inactivity": -2,
	}
	r.salience == 41
	r.lane == "ref_only"
	r.render_form == "ref_only"
}

test_counts_are_capped if {
	r := one(item("a", "standard", "auto", [30, 20], {"applied": 9, "viewed": 9, "skipped": 0, "trimmed": 0}, 0))
	r.breakdown.applied == 10
	r.breakdown.viewed == 5
	p := one(item("a", "standard", "auto", [30, 20], {"applied": 0, "viewed": 0, "skipped": 20, "trimmed": 20}, 0))
	p.breakdown.skipped == -15
	p.breakdown.trimmed == -10
}

test_inactivity_grace_step_and_max if {
	one(item("a", "standard", "auto", [0, 0], none, 30)).breakdown.inactivity == 0
	one(item("a", "standard", "auto", [0, 0], none, 36)).breakdown.inactivity == 0
	one(item("a", "standard", "auto", [0, 0], none, 37)).breakdown.inactivity == -1
	one(item("a", "standard", "auto", [0, 0], none, 1000)).breakdown.inactivity == -10
	one(item("a", "standard", "auto", [0, 0], none, 0)).breakdown.inactivity == 0
}

test_config_overrides_and_zero_means_default if {
	c := item("a", "standard", "auto", [50, 0], none, 20)
	r := lanes.decision.a with input as {"cards": [c], "config": {"inactivity_grace_days": 10, "inactivity_step_days": 2, "inactivity_max": 3}}
	r.breakdown.inactivity == -3
	r0 := lanes.decision.a with input as {"cards": [c], "config": {"inactivity_grace_days": 0, "inactivity_step_days": 0, "inactivity_max": 0}}
	r0.breakdown.inactivity == 0
}

test_salience_is_clamped if {
	one(item("a", "foundational", "auto", [30, 20], {"applied": 5, "viewed": 5, "skipped": 0, "trimmed": 0}, 0)).salience == 85
	one(item("a", "foundational", "auto", [90, 20], none, 0)).salience == 100
	one(item("a", "standard", "auto", [0, 0], {"applied": 0, "viewed": 0, "skipped": 9, "trimmed": 9}, 0)).salience == 0
}

test_lane_thresholds if {
	one(item("a", "standard", "auto", [30, 20], {"applied": 0, "viewed": 0, "skipped": 0, "trimmed": 0}, 0)).lane == "scoped"
	one(item("a", "standard", "auto", [30, 20], {"applied": 10, "viewed": 10, "skipped": 0, "trimmed": 0}, 0)).salience == 65
	one(item("a", "protected", "auto", [30, 20], {"applied": 0, "viewed": 0, "skipped": 5, "trimmed": 0}, 0)).lane == "scoped"
	one(item("a", "protected", "auto", [30, 20], {"applied": 5, "viewed": 0, "skipped": 0, "trimmed": 0}, 0)).lane == "core"
	one(item("a", "protected", "auto", [30, 20], {"applied": 4, "viewed": 1, "skipped": 0, "trimmed": 0}, 0)).lane == "scoped"
	one(item("a", "standard", "auto", [25, 20], none, 0)).lane == "scoped"
	one(item("a", "standard", "auto", [24, 20], none, 0)).lane == "ref_only"
	one(item("a", "standard", "auto", [20, 0], none, 0)).lane == "ref_only"
	one(item("a", "standard", "auto", [19, 0], none, 0)).lane == "inspector_only"
}

test_foundational_reaches_core_at_40 if {
	one(item("a", "foundational", "auto", [20, 0], none, 0)).lane == "core"
	one(item("a", "foundational", "auto", [19, 0], none, 0)).lane == "ref_only"
	one(item("a", "protected", "auto", [30, 0], none, 0)).lane == "ref_only"
}

test_render_forms if {
	core := [30, 20]
	counts := {"applied": 5, "viewed": 5, "skipped": 0, "trimmed": 0}
	one(item("a", "protected", "auto", core, counts, 0)).render_form == "inline_full"
	one(item("a", "protected", "inline_compact", core, counts, 0)).render_form == "inline_compact"
	one(item("a", "protected", "ref_preferred", core, counts, 0)).render_form == "ref_only"
	one(item("a", "standard", "auto", [30, 20], none, 0)).render_form == "inline_compact"
	one(item("a", "standard", "inline_full", [30, 20], none, 0)).render_form == "inline_full"
	one(item("a", "standard", "ref_preferred", [30, 20], none, 0)).render_form == "ref_only"
	one(item("a", "standard", "inline_full", [20, 0], none, 0)).render_form == "ref_only"
	one(item("a", "standard", "inline_full", [0, 0], none, 0)).render_form == "inspector_only"
}

test_missing_render_pref_and_persistence if {
	r := lanes.decision.a with input as {"cards": [{"card": {"id": "a"}, "scope_fit": 30, "operation_fit": 20}]}
	r.lane == "scoped"
	r.render_form == "inline_compact"
	r.breakdown.persistence == 0
}

test_batch_has_one_result_per_card if {
	d := lanes.decision with input as {"cards": [item("a", "standard", "auto", [0, 0], none, 0), item("b", "standard", "auto", [0, 0], none, 0)]}
	count(d) == 2
}
