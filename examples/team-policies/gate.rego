# Team gate: everything palace's default gate asks, and more for the storage
# layer. A qi card (tool knowledge) about store/** guards code where a wrong
# "fact" corrupts data, so it needs two verification refs and a human
# reviewer before it is promoted.
#
# This package replaces palace.gate whole; it builds on the embedded default,
# which stays importable as data.palace.default.gate.
package palace.gate

import rego.v1

import data.palace.default.gate as base

# about_store holds when the card is scoped to the storage layer.
about_store if {
	some p in input.card.scope.paths
	startswith(p, "store/")
}

about_store if input.card.field == "storage"

store_rule if {
	input.action == "promote"
	input.card.tier == "qi"
	about_store
}

store_missing := {"verification": n} if {
	store_rule
	n := 2 - object.get(input, ["counts", "verification"], 0)
	n > 0
} else := {}

store_problems contains sprintf("store: qi cards about store/** need 2 verification refs, have %d", [object.get(input, ["counts", "verification"], 0)]) if {
	count(store_missing) > 0
}

store_problems contains "store: qi cards about store/** need a human reviewer" if {
	store_rule
	input.reviewer.type != "human"
}

decision := base.decision if {
	count(store_problems) == 0
} else := {
	"allow": false,
	"reasons": sort(array.concat([r | some r in base.decision.reasons; not base.decision.allow], [r | some r in store_problems])),
	"missing": object.union(base.decision.missing, {role: n |
		some role, n in store_missing
		n > object.get(base.decision.missing, role, 0)
	}),
}
