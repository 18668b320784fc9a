// Package mailbox owns palace's mailbox: agents' field reports ("letters")
// and where they travel.
//
//   - A letter is one JSON object per line, its id a hash of the line ([ID]).
//   - The spool ($PALACE_HOME/field-reports.jsonl) is append-only;
//     [Mailbox.File] appends a secret-free letter in one locked O_APPEND write.
//   - Boxes: <repo>/.palace/inbox.jsonl travels with git; letters naming no
//     project go to $PALACE_HOME/inbox.jsonl. [Mailbox.Distribute] files
//     spool letters into boxes, [Mailbox.Sweep] reads them back with their
//     [Fates]. A repository's box is opened below its root without following
//     links: a cloned .palace/ is untrusted.
//   - [Check] is `palace mailbox check` and the LSP's diagnostics, each
//     finding with a stable code ([Codes]); [StagedCheck] runs it on the
//     index against HEAD.
//
// The package reads and writes only the spool, the boxes, the box registry
// ($PALACE_HOME/boxes.json) and its lock file. It must not touch the store
// or the policy engine: team rules reach it only through [DenyRules], which
// host implements with the palace.mailbox policy. Secrets are found by
// secrets, repositories by anchor.
package mailbox
