// Package rulefiles owns the formats of the rule files coding agents read on
// every request — AGENTS.md, CLAUDE.md, Cursor's .cursor/rules/*.mdc, and
// GitHub Copilot's .github/copilot-instructions.md and
// .github/instructions/*.instructions.md — in both directions: Render turns
// governed cards into those files (a marked, generated block inside
// AGENTS.md, CLAUDE.md and copilot-instructions.md, so hand-written text
// around it is kept; whole generated files for Cursor and Copilot), under a
// character budget per file; Parse reads any of them (or a plain Markdown
// list) back into rules with their line numbers and declared scope.
//
// It is pure: no file system, no store, no policy. host reads and writes the
// files (through repofs) and turns rules into evidence and candidate cards.
//
// # Generated blocks
//
// Everything palace writes sits between a line `<!-- palace:begin TARGET -->`
// and a line `<!-- palace:end -->`, both at column 0. Each rule inside is
// one list item ending in an annotation that cites the card:
//
//   - Statement. (`kc_…` · shu · canonical · paths `store/**` · languages go)
//
// so an agent can ask palace for the card, and Parse can read the rule back
// with its tier and scope. A reference line (`- ref `kc_…`: …`) points at a
// card without stating it and is never read back as a rule.
//
// # Globs
//
// Card path scopes, Cursor `globs` and Copilot `applyTo` share one meaning
// here, the one palace's scope policy applies and Copilot documents: a
// pattern is matched against the slash-separated path relative to the
// repository root; `*` and `?` stay inside one path segment; `**` spans any
// number of segments, and `**/` also matches none, so `**/*.go` matches a
// root-level main.go as well as store/db.go; a pattern without a slash is
// therefore root-level only (`*.go` matches main.go, not store/db.go);
// `dir/**` matches everything below dir; `{a,b}` is an alternation. Cursor
// and Copilot read a comma-separated list, so Render expands alternations
// before joining (a comma inside braces would split the list) and writes
// the list as a quoted YAML string; an unscoped card gets Copilot's `**`
// and no Cursor `globs` at all.
package rulefiles

// MaxFileBytes is the largest rule file palace reads, to export into it or
// import from it: 1 MiB, far above what an agent reads on each request.
const MaxFileBytes = 1 << 20
