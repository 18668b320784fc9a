package palace.mailbox_test

import rego.v1

import data.palace.mailbox

test_bug_without_snippet_is_denied if {
	count(mailbox.deny) == 1 with input as {"box": "global", "letter": {"class": "bug", "what": "crash"}}
}

test_bug_with_snippet_passes if {
	count(mailbox.deny) == 0 with input as {"box": "global", "letter": {"class": "bug", "what": "crash", "snippet": "panic: x"}}
}
