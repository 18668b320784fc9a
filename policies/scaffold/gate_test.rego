package palace.gate_test

import rego.v1

import data.palace.gate

promote(counts) := {
	"action": "promote", "target": "promoted", "mode": "human",
	"card": {"id": "kc_1", "tier": "qi", "status": "candidate", "field": "general", "scope": {"paths": [], "languages": [], "fields": []}},
	"counts": object.union({"supporting": 0, "verification": 0, "teaching": 0, "counterexample": 0}, counts),
	"reviewer": {"name": "alice", "type": "human"},
}

test_qi_with_one_supporting_and_one_verification_is_promoted if {
	gate.decision.allow with input as promote({"supporting": 1, "verification": 1})
}

test_qi_without_verification_is_denied if {
	not gate.decision.allow with input as promote({"supporting": 1})
}
