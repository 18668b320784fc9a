package palace.gate_test

import rego.v1

import data.palace.gate

card(tier) := {"id": "kc_t", "tier": tier, "status": "candidate", "anchor": "worktree"}

human := {"name": "alice", "type": "human"}

agent := {"name": "claude", "type": "agent"}

promote(tier, target, counts, reviewer) := {
	"action": "promote", "target": target, "card": card(tier),
	"counts": counts, "reviewer": reviewer, "mode": reviewer.type,
}

counts(s, v, t, c) := {"supporting": s, "verification": v, "teaching": t, "counterexample": c}

# dao_tian → canonical: 3 supporting, 2 verification, 1 teaching, human reviewer.

test_dao_tian_canonical_allowed if {
	d := gate.decision with input as promote("dao_tian", "canonical", counts(3, 2, 1, 0), human)
	d.allow
	d.reasons == ["dao_tian → canonical: all thresholds met"]
	d.missing == {}
}

test_dao_tian_canonical_each_threshold if {
	d1 := gate.decision with input as promote("dao_tian", "canonical", counts(2, 2, 1, 0), human)
	not d1.allow
	d1.missing == {"supporting": 1}
	d1.reasons == ["supporting: have 2, need 3"]

	d2 := gate.decision with input as promote("dao_tian", "canonical", counts(3, 1, 1, 0), human)
	d2.missing == {"verification": 1}

	d3 := gate.decision with input as promote("dao_tian", "canonical", counts(3, 2, 0, 0), human)
	d3.missing == {"teaching": 1}
	d3.reasons == ["teaching: have 0, need 1"]
}

test_dao_tian_canonical_needs_human if {
	d := gate.decision with input as promote("dao_tian", "canonical", counts(3, 2, 1, 0), agent)
	not d.allow
	d.reasons == ["reviewer: dao_tian → canonical needs a human reviewer"]
	d.missing == {}
}

test_dao_tian_missing_reviewer_denies if {
	inp := object.remove(promote("dao_tian", "canonical", counts(3, 2, 1, 0), human), {"reviewer"})
	d := gate.decision with input as inp
	not d.allow
}

test_dao_tian_promoted_has_no_rule if {
	d := gate.decision with input as promote("dao_tian", "promoted", counts(9, 9, 9, 0), human)
	not d.allow
	d.reasons == ["no gate rule for dao_tian → promoted"]
}

# dao_ren → promoted: 2 supporting, 1 verification.

test_dao_ren_promoted if {
	gate.decision.allow with input as promote("dao_ren", "promoted", counts(2, 1, 0, 0), agent)
	d := gate.decision with input as promote("dao_ren", "promoted", counts(1, 0, 0, 0), agent)
	not d.allow
	d.missing == {"supporting": 1, "verification": 1}
	d.reasons == ["supporting: have 1, need 2", "verification: have 0, need 1"]
}

# shu and qi → promoted: 1 supporting, 1 verification.

test_shu_and_qi_promoted if {
	every tier in ["shu", "qi"] {
		gate.decision.allow with input as promote(tier, "promoted", counts(1, 1, 0, 0), agent)
		d := gate.decision with input as promote(tier, "promoted", counts(1, 0, 0, 0), agent)
		d.missing == {"verification": 1}
		d2 := gate.decision with input as promote(tier, "promoted", counts(0, 1, 0, 0), agent)
		d2.missing == {"supporting": 1}
	}
}

test_canonical_for_lower_tiers_needs_more_and_a_human if {
	gate.decision.allow with input as promote("qi", "canonical", counts(2, 2, 0, 0), human)
	gate.decision.allow with input as promote("dao_ren", "canonical", counts(3, 2, 0, 0), human)
	d := gate.decision with input as promote("shu", "canonical", counts(2, 2, 0, 0), agent)
	d.reasons == ["reviewer: shu → canonical needs a human reviewer"]
}

# Any counterexample blocks.

test_counterexample_blocks if {
	every tier_target in [["dao_tian", "canonical"], ["dao_ren", "promoted"], ["shu", "promoted"], ["qi", "promoted"]] {
		d := gate.decision with input as promote(tier_target[0], tier_target[1], counts(5, 5, 5, 1), human)
		not d.allow
		d.reasons == ["counterexample: 1 on record, any counterexample blocks promotion"]
	}
}

test_missing_counts_are_zero if {
	inp := object.remove(promote("qi", "promoted", counts(0, 0, 0, 0), agent), {"counts"})
	d := gate.decision with input as inp
	d.missing == {"supporting": 1, "verification": 1}
}

# publish

test_publish if {
	gate.decision.allow with input as {"action": "publish", "target": "repo", "card": card("qi"), "counts": counts(1, 1, 0, 0), "reviewer": agent}
	d := gate.decision with input as {"action": "publish", "target": "global", "card": card("qi"), "counts": counts(1, 1, 0, 0), "reviewer": agent}
	d.reasons == ["reviewer: publish → global needs a human reviewer"]
	d2 := gate.decision with input as {"action": "publish", "target": "repo", "card": card("qi"), "counts": counts(1, 1, 0, 2), "reviewer": human}
	d2.reasons == ["counterexample: 2 on record, any counterexample blocks publishing"]
	d3 := gate.decision with input as {"action": "publish", "target": "worktree", "card": card("qi"), "counts": counts(1, 1, 0, 0), "reviewer": human}
	d3.reasons == ["no gate rule for publish → worktree"]
	d4 := gate.decision with input as {"action": "publish", "target": "global", "card": card("qi"), "counts": counts(1, 1, 0, 0), "reviewer": human}
	d4.reasons == ["publish → global: allowed"]
}

test_unknown_action if {
	d := gate.decision with input as {"action": "delete", "target": "promoted", "card": card("qi"), "counts": counts(1, 1, 0, 0), "reviewer": human}
	not d.allow
	d.reasons == ["unknown action delete"]
}

# An input without card.tier or target still gets a reason that names what
# was asked, as the Go engine and examples/plugins/gate-go give it.
test_promote_without_tier_or_target_names_them if {
	inp := object.remove(promote("qi", "promoted", counts(1, 1, 0, 0), human), {"card", "target"})
	d := gate.decision with input as inp
	not d.allow
	d.reasons == ["no gate rule for  → "]
	d.missing == {}
}

# resolve needs a verification newer than the contest.
test_resolve_needs_newer_verification if {
	d := gate.decision with input as {"action": "resolve", "target": "promoted", "card": {"tier": "shu"}, "newest": {"verification": "2026-01-02T00:00:00.000Z"}, "contest": {"contested": true, "since": "2026-01-03T00:00:00.000Z"}}
	not d.allow
	d.reasons == ["resolve: needs a verification recorded after the contest (2026-01-03T00:00:00.000Z); the newest is 2026-01-02T00:00:00.000Z"]
	d.missing == {"verification": 1}
	d2 := gate.decision with input as {"action": "resolve", "target": "promoted", "card": {"tier": "shu"}, "newest": {"verification": "2026-01-04T00:00:00.000Z"}, "contest": {"contested": true, "since": "2026-01-03T00:00:00.000Z"}}
	d2.allow
	d3 := gate.decision with input as {"action": "resolve", "card": {"tier": "shu"}, "contest": {"since": "2026-01-03T00:00:00.000Z"}}
	d3.reasons == ["resolve: needs a verification recorded after the contest (2026-01-03T00:00:00.000Z); the newest is none"]
}

# A card file's claim counts only from a commit on the upstream default
# branch; the same claim from there is decided on its evidence.
test_card_file_needs_the_reviewed_history if {
	file := {"channel": "card_file", "path": ".palace/cards/kc_1.md", "commit": "abc123", "upstream": "origin/main"}
	inp := object.union(promote("qi", "promoted", counts(1, 1, 0, 0), human), {"source": object.union(file, {"on_default_branch": false})})
	d := gate.decision with input as inp
	not d.allow
	d.reasons == ["source: card file .palace/cards/kc_1.md comes from commit abc123, which is not on the upstream default branch (origin/main): a file's claim counts only from the team's reviewed history"]
	d2 := gate.decision with input as object.union(inp, {"source": object.union(file, {"on_default_branch": true})})
	d2.allow
	d3 := gate.decision with input as object.union(inp, {"source": {"channel": "card_file", "path": "p", "commit": "c", "upstream": ""}})
	d3.reasons == ["source: card file p comes from commit c, which is not on the upstream default branch (none found): a file's claim counts only from the team's reviewed history"]
	d4 := gate.decision with input as object.union(inp, {"source": {"channel": "local"}})
	d4.allow
}

# A file may demote a card only on a counterexample no newer verification
# outweighs, and retire it from the reviewed history.
test_demote_and_retire if {
	d := gate.decision with input as {"action": "demote", "card": card("shu"), "counts": counts(1, 1, 0, 1)}
	d.allow
	d.reasons == ["demote: 1 counterexample(s) on record"]
	d2 := gate.decision with input as {"action": "demote", "card": card("shu"), "counts": counts(1, 1, 0, 0)}
	not d2.allow
	d2.missing == {"counterexample": 1}
	d3 := gate.decision with input as {"action": "retire", "card": card("shu")}
	d3.allow
}
