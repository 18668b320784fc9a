# Team mailbox hygiene, on top of palace's built-in checks (valid JSON,
# required fields, secrets, append-only history…). Each message is an error
# on the letter's line in `palace mailbox check` and in the editor.
package palace.mailbox

import rego.v1

# Letters in a project box must say which repository they are about, so
# `palace mailbox distribute` can route answers back.
deny contains "letter has no repo: add \"repo\": \"github.com/org/name\"" if {
	input.box != "global"
	not input.letter.repo
}

deny contains sprintf("repo %q is not an org/name path", [input.letter.repo]) if {
	is_string(input.letter.repo)
	count(split(input.letter.repo, "/")) < 3
}

# A bug report without a snippet cannot be reproduced.
deny contains "bug letters need a snippet of what was seen" if {
	input.letter.class == "bug"
	not input.letter.snippet
}
