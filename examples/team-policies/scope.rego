# Team scope: palace's default rules, plus a boost for cards whose trigger
# intents match what the agent is doing. A card tagged for "migrate" is worth
# more during a migration than its path match alone says: it gets the full
# operation fit and 5 more scope fit points, and says so.
package palace.scope

import rego.v1

import data.palace.default.scope as base

intents := {x | some x in object.get(input, ["context", "intents"], [])}

decision := {c.id: boost(c, base.decision[c.id]) | some c in input.cards}

boost(c, r) := object.union(r, {
	"scope_fit": min([30, r.scope_fit + 5]),
	"operation_fit": 20,
	"why": array.concat(r.why, [sprintf("team boost: intent %s matches", [concat(", ", hits)])]),
}) if {
	r.applies
	hits := sort({x | some x in object.get(c, ["trigger", "intents"], []); x in intents})
	count(hits) > 0
} else := r
