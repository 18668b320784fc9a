// Package rulefiles owns the formats of the rule files coding agents read on
// every request (AGENTS.md, CLAUDE.md, Cursor's .cursor/rules/*.mdc, Copilot's
// .github/copilot-instructions.md and .github/instructions/*.instructions.md)
// both ways: Render turns governed cards into them under a budget per file,
// as a marked block inside hand-written files or as whole generated files;
// Parse reads any of them, or a Markdown list, back into rules. It is pure:
// no file system, no store, no policy.
//
// # Generated blocks
//
// Everything palace writes sits between the lines `<!-- palace:begin TARGET -->`
// and `<!-- palace:end -->`, at column 0. Each rule is one list item ending
// in an annotation that cites the card, which Parse reads back:
//
//   - Statement. (`kc_…` · shu · canonical · paths `store/**` · languages go)
//
// A reference line (`- ref `kc_…`: …`) is never read back as a rule.
//
// # Globs
//
// Card path scopes, Cursor `globs` and Copilot `applyTo` match the
// slash-separated path from the repository root: `*` and `?` stay in one
// segment, `**` spans any number and `**/` also none (`**/*.go` matches
// main.go and store/db.go, `*.go` only main.go), `{a,b}` is an alternation.
// Render expands alternations before joining a comma-separated list, written
// as a quoted YAML string; an unscoped card gets Copilot's `**` and no
// Cursor `globs`.
package rulefiles

// MaxFileBytes is the largest rule file palace reads or exports into.
const MaxFileBytes = 1 << 20
