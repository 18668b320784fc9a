# Team research policy: replaces palace.research whole. This one lets an
# agent ingest a small report as evidence too (research never becomes a
# card by itself: candidate insights stay suggestions).
package palace.research

import rego.v1

import data.palace.default.research as base

decision := {"allow": true, "reasons": ["agents may ingest reports of at most 50 findings"]} if {
	input.mode == "agent"
	input.report.findings <= 50
} else := base.decision
