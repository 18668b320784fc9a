// Package mailbox owns palace's mailbox: agents' field reports ("letters")
// and where they travel.
//
//   - A letter is one JSON object per line; its id is the first 12 hex
//     characters of the sha256 of the line's bytes ([ID]). [ParseLine] and
//     [Letter.Validate] enforce the schema with messages that name the field.
//   - The spool ($PALACE_HOME/field-reports.jsonl) is append-only;
//     [Mailbox.File] scans a letter for secrets and appends it with one
//     O_APPEND write under a lock on the file, so concurrent writers never
//     interleave, and a last line left without '\n' is ended, not extended.
//   - Boxes: each repository has <repo>/.palace/inbox.jsonl, which travels
//     with git; letters that name no project ([NamesNoProject]) go to the
//     global box $PALACE_HOME/inbox.jsonl. [Mailbox.Distribute] files spool
//     letters into boxes (idempotent), [Mailbox.Sweep] and [Mailbox.List]
//     read them back with their fates ([Fates]). A repository's box is
//     opened below its root without following links (repofs): a cloned
//     .palace/ is untrusted.
//   - [Check] is the one implementation of `palace mailbox check` (the
//     pre-commit hook) and of the LSP's mailbox diagnostics: pure over bytes,
//     each finding with a stable code (see [Codes]). [StagedCheck] runs it on
//     the staged version of a box against HEAD.
//
// The package reads and writes only the spool, the boxes, the box registry
// ($PALACE_HOME/boxes.json) and its lock file. It must not touch the store
// or the policy engine: team rules reach it only through [DenyRules], which
// host implements with the palace.mailbox policy. Secrets are found by
// secrets, repositories by anchor.
package mailbox
