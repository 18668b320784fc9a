package palace.gate_test

import rego.v1

import data.palace.gate

human := {"name": "alice", "type": "human"}

agent := {"name": "claude", "type": "agent"}

promote(card, counts, reviewer) := {
	"action": "promote", "target": "promoted", "mode": reviewer.type,
	"card": object.union({"id": "kc_1", "tier": "qi", "status": "candidate", "field": "general", "scope": {"paths": [], "languages": [], "fields": []}}, card),
	"counts": object.union({"supporting": 0, "verification": 0, "teaching": 0, "counterexample": 0}, counts),
	"reviewer": reviewer,
}

store_card := {"scope": {"paths": ["store/**"], "languages": [], "fields": []}}

test_store_qi_with_two_verifications_and_a_human_passes if {
	d := gate.decision with input as promote(store_card, {"supporting": 1, "verification": 2}, human)
	d.allow
	d.reasons == ["qi → promoted: all thresholds met"]
}

test_store_qi_with_one_verification_is_denied if {
	d := gate.decision with input as promote(store_card, {"supporting": 1, "verification": 1}, human)
	not d.allow
	d.reasons == ["store: qi cards about store/** need 2 verification refs, have 1"]
	d.missing == {"verification": 1}
}

test_store_qi_needs_a_human if {
	d := gate.decision with input as promote(store_card, {"supporting": 1, "verification": 2}, agent)
	not d.allow
	d.reasons == ["store: qi cards about store/** need a human reviewer"]
}

test_storage_field_counts_as_store if {
	d := gate.decision with input as promote({"field": "storage"}, {"supporting": 1, "verification": 1}, human)
	not d.allow
}

test_default_reasons_are_kept if {
	d := gate.decision with input as promote(store_card, {"supporting": 0, "verification": 0}, agent)
	d.reasons == [
		"store: qi cards about store/** need 2 verification refs, have 0",
		"store: qi cards about store/** need a human reviewer",
		"supporting: have 0, need 1",
		"verification: have 0, need 1",
	]
	d.missing == {"supporting": 1, "verification": 2}
}

test_other_cards_follow_the_default if {
	gate.decision.allow with input as promote({"scope": {"paths": ["web/**"]}}, {"supporting": 1, "verification": 1}, agent)
	d := gate.decision with input as promote({"tier": "shu", "field": "storage"}, {"supporting": 1, "verification": 1}, agent)
	d.allow
}
