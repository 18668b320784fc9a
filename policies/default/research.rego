# palace.research decides whether a research report may be handled as
# asked: validated, planned (both dry runs) or ingested as evidence.
#
# Input and output are documented in policies/README.md. Research enters
# only as evidence (one row per finding, provenance research); it never
# creates or promotes a card, whatever this policy says. The default lets
# anyone validate and plan, and lets a person ingest; an agent may ingest
# only where a team replaces this package to allow it.
package palace.research

import rego.v1

decision := {"allow": true, "reasons": ["a dry run writes nothing"]} if {
	input.dry_run == true
} else := {"allow": true, "reasons": ["a person may ingest research as evidence"]} if {
	input.mode == "human"
} else := {"allow": false, "reasons": [sprintf("%v mode may only validate or plan research (dry run): a person ingests it, or a team policy palace.research allows agents to", [object.get(input, "mode", "")])]}
