package palace.lanes_test

import rego.v1

import data.palace.lanes

none := {"applied": 0, "skipped": 0, "trimmed": 0, "viewed": 0}

test_every_card_gets_a_lane if {
	c := {"card": {"id": "kc_1", "persistence": "standard", "render_pref": "auto"}, "scope_fit": 20, "operation_fit": 0, "relevance": 0, "counts30d": none, "age_days": 0}
	d := lanes.decision with input as {"cards": [c], "config": {}}
	d.kc_1.lane in {"core", "scoped", "ref_only", "inspector_only"}
}
