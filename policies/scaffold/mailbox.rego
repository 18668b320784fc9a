# Team mailbox hygiene: each message in deny is an error on the letter's
# line in `palace mailbox check` and in the editor. palace's built-in checks
# (valid JSON, required fields, secrets, append-only history) run anyway.
package palace.mailbox

import rego.v1

deny contains "bug letters need a snippet of what was seen" if {
	input.letter.class == "bug"
	not input.letter.snippet
}
