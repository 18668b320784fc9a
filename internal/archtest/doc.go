// Package archtest holds the tests that keep palace's import graph in
// shape: the package picture in docs/architecture.md is the allowlist of
// package-to-package edges and matches `go list`, the surfaces (cmd/palace,
// lsp, mcp, ui) reach the store only through host, the domain package
// imports nothing of palace's, and only the door for authority writes
// cards. It has no code of its own.
package archtest
