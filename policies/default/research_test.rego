package palace.research_test

import rego.v1

import data.palace.research

test_dry_runs_are_allowed_to_anyone if {
	research.decision.allow with input as {"action": "plan", "dry_run": true, "mode": "agent"}
	research.decision.allow with input as {"action": "validate", "dry_run": true, "mode": "human"}
}

test_people_ingest if {
	research.decision.allow with input as {"action": "ingest", "dry_run": false, "mode": "human"}
}

test_agents_do_not_ingest_by_default if {
	d := research.decision with input as {"action": "ingest", "dry_run": false, "mode": "agent"}
	not d.allow
	contains(d.reasons[0], "agent mode may only validate or plan")
}
