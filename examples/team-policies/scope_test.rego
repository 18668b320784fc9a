package palace.scope_test

import rego.v1

import data.palace.scope

card(id, paths, intents) := {"id": id, "field": "general", "scope": {"paths": paths}, "trigger": {"intents": intents}}

test_matching_intent_is_boosted if {
	d := scope.decision with input as {
		"context": {"file": "store/db.go", "intents": ["migrate"]},
		"cards": [card("a", ["store/**"], ["migrate", "debug"])],
	}
	d.a.applies
	d.a.scope_fit == 25
	d.a.operation_fit == 20
	d.a.why == [
		"path store/db.go matches store/**",
		"intent migrate is one of the card's trigger intents",
		"team boost: intent migrate matches",
	]
}

test_no_intent_no_boost if {
	d := scope.decision with input as {"context": {"file": "store/db.go", "intents": ["review"]}, "cards": [card("a", ["store/**"], ["migrate"])]}
	d.a.scope_fit == 20
	d.a.operation_fit == -10
}

test_a_card_that_does_not_apply_is_not_boosted if {
	d := scope.decision with input as {"context": {"file": "web/app.ts", "intents": ["migrate"]}, "cards": [card("a", ["store/**"], ["migrate"])]}
	not d.a.applies
	d.a.operation_fit == 8
	count(d.a.why) == 2
}
