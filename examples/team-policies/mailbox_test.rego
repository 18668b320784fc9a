package palace.mailbox_test

import rego.v1

import data.palace.mailbox

letter(extra) := object.union({"ts": "2026-01-01T00:00:00Z", "agent": "claude", "class": "note", "what": "x", "repo": "github.com/acme/widgets"}, extra)

test_good_letter_passes if {
	count(mailbox.deny) == 0 with input as {"box": "project", "path": ".palace/inbox.jsonl", "line": 1, "letter": letter({})}
}

test_letter_without_repo_is_denied if {
	mailbox.deny == {"letter has no repo: add \"repo\": \"github.com/org/name\""} with input as {"box": "project", "letter": object.remove(letter({}), ["repo"])}
}

test_global_box_needs_no_repo if {
	count(mailbox.deny) == 0 with input as {"box": "global", "letter": object.remove(letter({}), ["repo"])}
}

test_short_repo_is_denied if {
	mailbox.deny == {"repo \"widgets\" is not an org/name path"} with input as {"box": "project", "letter": letter({"repo": "widgets"})}
}

test_bug_needs_snippet if {
	mailbox.deny == {"bug letters need a snippet of what was seen"} with input as {"box": "project", "letter": letter({"class": "bug"})}
	count(mailbox.deny) == 0 with input as {"box": "project", "letter": letter({"class": "bug", "snippet": "panic: x"})}
}
