# palace.mailbox holds a team's extra hygiene rules for mailbox letters, in
# conftest style: every message in `deny` is an error on that letter's line.
#
# The built-in checks (valid JSON, required fields, secrets, conflict
# markers, duplicates, append-only history…) live in Go and always run; the
# default adds nothing. Input and output are documented in
# policies/README.md; examples/team-policies/ has a realistic rule set.
package palace.mailbox

import rego.v1

deny := set()
