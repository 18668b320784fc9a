package palace.mailbox_test

import rego.v1

import data.palace.mailbox

test_default_denies_nothing if {
	count(mailbox.deny) == 0 with input as {"box": "project", "path": ".palace/inbox.jsonl", "line": 1, "letter": {}}
}
