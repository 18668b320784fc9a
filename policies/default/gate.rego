# palace.gate decides whether a card may be promoted, published, resolved,
# demoted or retired.
#
# Input and output are documented in policies/README.md. The thresholds are
# palace's seed table: dao_tian needs three supporting, two verifying and
# one teaching piece of evidence and a human reviewer to become canonical;
# dao_ren two and one to be promoted; shu and qi one and one; any
# counterexample blocks. A change a card file brings (input.source.channel
# "card_file") counts only from the team's reviewed history: a commit on the
# upstream default branch. Teams replace this package by placing their own
# `package palace.gate` in <repo>/.palace/policies/.
#
# The rules keep evaluation linear: one decision rule whose branches each
# start with an equality on input.action, so the evaluator indexes them and
# runs only the branch asked for; the allow path is checked first with plain
# comparisons, and the reasons are built only when something is missing.
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

roles := ["supporting", "verification", "teaching"]

# have[role] is the evidence count of role, 0 when the input omits it.
have := object.union(
	{"supporting": 0, "verification": 0, "teaching": 0, "counterexample": 0},
	object.get(input, "counts", {}),
)

human_reviewer if input.reviewer.type == "human"

# tier and target are "" when the input omits them, so a denial still names
# what was asked for ("no gate rule for  → promoted") instead of leaving
# the decision without a reason.
tier := object.get(input, ["card", "tier"], "")

target := object.get(input, "target", "")

# source is where the change comes from, "local" when the input omits it.
source := object.union(
	{"channel": "local", "path": "", "commit": "", "upstream": "", "on_default_branch": false},
	object.get(input, "source", {}),
)

unreviewed_file if {
	source.channel == "card_file"
	source.on_default_branch != true
}

upstream_name := source.upstream if source.upstream != ""

upstream_name := "none found" if source.upstream == ""

decision := deny([sprintf(
	"source: card file %v comes from commit %v, which is not on the upstream default branch (%v): a file's claim counts only from the team's reviewed history",
	[source.path, source.commit, upstream_name],
)]) if {
	unreviewed_file
} else := promote(rule) if {
	input.action == "promote"
	rule := promote_rules[tier][target]
} else := deny([sprintf("no gate rule for %v → %v", [tier, target])]) if {
	input.action == "promote"
} else := publish if {
	input.action == "publish"
} else := resolve if {
	input.action == "resolve"
} else := demote if {
	input.action == "demote"
} else := {"allow": true, "reasons": ["retire: allowed"], "missing": {}} if {
	input.action == "retire"
} else := deny([sprintf("unknown action %v", [object.get(input, "action", "")])])

deny(reasons) := {"allow": false, "reasons": reasons, "missing": {}}

promote(rule) := {"allow": true, "reasons": [sprintf("%v → %v: all thresholds met", [tier, target])], "missing": {}} if {
	have.supporting >= rule.supporting
	have.verification >= rule.verification
	have.teaching >= rule.teaching
	not have.counterexample > 0
	reviewer_ok(rule)
} else := {"allow": false, "reasons": sort(array.concat(shortfalls, array.concat(blocked, unsigned))), "missing": missing} if {
	missing := {role: n | some role in roles; n := rule[role] - have[role]; n > 0}
	shortfalls := [sprintf("%s: have %d, need %d", [role, have[role], rule[role]]) | some role, _ in missing]
	blocked := [sprintf("counterexample: %d on record, any counterexample blocks promotion", [have.counterexample]) | have.counterexample > 0]
	unsigned := [sprintf("reviewer: %v → %v needs a human reviewer", [tier, target]) | not reviewer_ok(rule)]
}

reviewer_ok(rule) if not rule.human

reviewer_ok(_) if human_reviewer

publish := deny([sprintf("no gate rule for publish → %v", [target])]) if {
	not target in {"repo", "global"}
} else := {"allow": true, "reasons": [sprintf("publish → %v: allowed", [target])], "missing": {}} if {
	not have.counterexample > 0
	publish_reviewer_ok
} else := deny(sort(array.concat(blocked, unsigned))) if {
	blocked := [sprintf("counterexample: %d on record, any counterexample blocks publishing", [have.counterexample]) | have.counterexample > 0]
	unsigned := ["reviewer: publish → global needs a human reviewer" | not publish_reviewer_ok]
}

publish_reviewer_ok if target == "repo"

publish_reviewer_ok if human_reviewer

# resolve: a contested card returns to its lanes when a verification was
# recorded after what contested it. input.newest.verification and
# input.contest.since are RFC3339 UTC times, which compare as strings.
newest_verification := object.get(input, ["newest", "verification"], "")

contest_since := object.get(input, ["contest", "since"], "")

resolve := {"allow": true, "reasons": [sprintf("resolve: verification of %v is newer than the contest (%v)", [newest_verification, contest_since])], "missing": {}} if {
	newest_verification != ""
	newest_verification > contest_since
} else := {"allow": false, "reasons": [sprintf("resolve: needs a verification recorded after the contest (%v); the newest is %v", [contest_since, none_if_empty(newest_verification)])], "missing": {"verification": 1}}

none_if_empty(s) := "none" if s == ""

none_if_empty(s) := s if s != ""

# demote: a card steps down on a counterexample no newer verification
# outweighs (input.counts.counterexample counts only those).
demote := {"allow": true, "reasons": [sprintf("demote: %d counterexample(s) on record", [have.counterexample])], "missing": {}} if {
	have.counterexample > 0
} else := {"allow": false, "reasons": ["demote: needs a counterexample on record that no newer verification outweighs"], "missing": {"counterexample": 1}}
