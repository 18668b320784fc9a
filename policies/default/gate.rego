# palace.gate decides whether a card may be promoted or published.
#
# Input and output are documented in policies/README.md. The thresholds are
# palace's seed table (DESIGN §5); teams replace this package by placing their
# own `package palace.gate` in <repo>/.palace/policies/. Rules are written in
# the linear, indexed style of OPA's performance guide: each starts with an
# equality on input.action so the rule index skips the other action's rules.
package palace.gate

import rego.v1

# promote_rules[tier][target] = evidence needed by role, and whether a human
# reviewer must sign.
promote_rules := {
	"dao_tian": {"canonical": {"supporting": 3, "verification": 2, "teaching": 1, "human": true}},
	"dao_ren": {
		"promoted": {"supporting": 2, "verification": 1, "teaching": 0, "human": false},
		"canonical": {"supporting": 3, "verification": 2, "teaching": 0, "human": true},
	},
	"shu": {
		"promoted": {"supporting": 1, "verification": 1, "teaching": 0, "human": false},
		"canonical": {"supporting": 2, "verification": 2, "teaching": 0, "human": true},
	},
	"qi": {
		"promoted": {"supporting": 1, "verification": 1, "teaching": 0, "human": false},
		"canonical": {"supporting": 2, "verification": 2, "teaching": 0, "human": true},
	},
}

# have[role] is the evidence count of role, 0 when the input omits it.
zero := {"supporting": 0, "verification": 0, "teaching": 0, "counterexample": 0}

have := object.union(zero, object.get(input, "counts", {}))

human_reviewer if input.reviewer.type == "human"

rule := promote_rules[input.card.tier][input.target] if input.action == "promote"

missing := {role: n |
	some role in ["supporting", "verification", "teaching"]
	n := rule[role] - have[role]
	n > 0
}

problems contains sprintf("%s: have %d, need %d", [role, have[role], have[role] + n]) if some role, n in missing

problems contains sprintf("unknown action %v", [object.get(input, "action", "")]) if {
	not input.action in {"promote", "publish"}
}

problems contains sprintf("no gate rule for %v → %v", [input.card.tier, input.target]) if {
	input.action == "promote"
	not rule
}

problems contains sprintf("counterexample: %d on record, any counterexample blocks promotion", [have.counterexample]) if {
	input.action == "promote"
	rule
	have.counterexample > 0
}

problems contains sprintf("reviewer: %v → %v needs a human reviewer", [input.card.tier, input.target]) if {
	input.action == "promote"
	rule.human
	not human_reviewer
}

problems contains sprintf("no gate rule for publish → %v", [object.get(input, "target", "")]) if {
	input.action == "publish"
	not input.target in {"repo", "global"}
}

problems contains sprintf("counterexample: %d on record, any counterexample blocks publishing", [have.counterexample]) if {
	input.action == "publish"
	input.target in {"repo", "global"}
	have.counterexample > 0
}

problems contains "reviewer: publish → global needs a human reviewer" if {
	input.action == "publish"
	input.target == "global"
	not human_reviewer
}

ok_reason := sprintf("%v → %v: all thresholds met", [input.card.tier, input.target]) if input.action == "promote"

ok_reason := sprintf("publish → %v: allowed", [input.target]) if input.action == "publish"

decision := {"allow": true, "reasons": [ok_reason], "missing": {}} if {
	count(problems) == 0
} else := {"allow": false, "reasons": sort(problems), "missing": missing}
