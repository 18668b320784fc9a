package palace.research_test

import rego.v1

import data.palace.research

test_agent_ingests_a_small_report if {
	research.decision.allow with input as {"action": "ingest", "dry_run": false, "mode": "agent", "report": {"findings": 3}}
}

test_agent_does_not_ingest_a_large_one if {
	not research.decision.allow with input as {"action": "ingest", "dry_run": false, "mode": "agent", "report": {"findings": 500}}
}
