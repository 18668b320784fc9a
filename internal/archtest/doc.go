// Package archtest holds the test that keeps palace's import graph in
// shape: the surfaces (cmd/palace, lsp, mcp, ui) reach the store and the
// policies only through host, and the domain package imports nothing of
// palace's. It has no code of its own.
package archtest
